/** Jest runs the TypeScript sources as native ESM through SWC, with decorator metadata for type-graphql and MikroORM. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2024',
        },
        module: { type: 'es6' },
      },
    ],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Through PgBouncer: `npm run test:pooler` (jest.pooler.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/pooler/'],
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
  testTimeout: 30000,
  // Jest's default on a 2-core machine is one worker. Much of a test's time is spent waiting (on
  // PostgreSQL, Chromium, timers, child processes), so more workers than cores overlap it: on this
  // 2-core machine, nothing else running, the full suite took 295 s with three (median of four runs, 267–360 s) (1,019 s with one and
  // 435 s with two, both while other work shared the cores).
  maxWorkers: 3,
};
