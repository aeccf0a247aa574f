import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * Architecture boundaries (issue 13), held by eslint-plugin-import-x (`no-restricted-paths`, `no-cycle`):
 *  1. src/platform never imports a module, nor the composition root (app.ts, main.ts, cli/) or web/.
 *  2. From outside a module (app.ts, cli/, web/, src/modules/index.ts, other modules) only that module's
 *     index.ts may be imported. The browser page (src/web) may also import a module's browser.ts: the
 *     browser-safe part of its public surface, which index.ts cannot be (it loads MikroORM, Fastify…).
 *     Tests are not covered: they test module internals on purpose.
 *  3. Inside a module graphql/ and rest/ never import each other; shared presentation lives in the module.
 *  4. No import cycles in src. Type-only imports are not followed (import-x always skips them): with
 *     verbatimModuleSyntax they are erased, so they cannot make a module evaluate before its dependency.
 * Modules are read from the file system, so a new module is covered without touching this file.
 */
const root = import.meta.dirname; // zones and the module list do not depend on the directory eslint runs in
const modules = readdirSync(`${root}/src/modules`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const moduleZones = modules.map((name) => ({
  target: ['./src/*.ts', './src/{cli,platform}/**', './src/modules/*.ts', ...modules.filter((other) => other !== name).map((other) => `./src/modules/${other}/**`)],
  from: `./src/modules/${name}`,
  except: ['./index.ts'],
  message: `Outside the ${name} module import only src/modules/${name}/index.ts (export what you need from there).`,
}));
const webZones = modules.map((name) => ({
  target: './src/web/**',
  from: `./src/modules/${name}`,
  except: ['./browser.ts'],
  message: `The browser page may import only src/modules/${name}/browser.ts (the browser-safe public surface).`,
}));

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test/generated/', 'src/web/generated/', 'test-artifacts/', 'test/fixtures/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      // Decorator metadata turns some type positions into runtime values (type-graphql, MikroORM).
      parserOptions: { emitDecoratorMetadata: true, experimentalDecorators: true },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // From import-x's flatConfigs.typescript: without these, import-x parses no .ts file and no-cycle sees nothing.
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['tsconfig.json', 'src/web/tsconfig.json'], noWarnOnMultipleProjects: true })],
    },
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: root,
          zones: [
            {
              target: './src/platform',
              from: ['./src/modules', './src/app.ts', './src/main.ts', './src/cli', './src/web'],
              message: 'Platform code is infrastructure: it never imports a module or the composition root.',
            },
            ...moduleZones,
            ...webZones,
            {
              target: './src/modules/*/graphql/**',
              from: './src/modules/*/rest/**',
              message: 'GraphQL never imports the REST adapter; move shared presentation into the module (e.g. a *.view.ts).',
            },
            {
              target: './src/modules/*/rest/**',
              from: './src/modules/*/graphql/**',
              message: 'REST never imports the GraphQL adapter; move shared presentation into the module (e.g. a *.view.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // Services decide; adapters speak HTTP. Rate-limit headers and the like come back as values (issue 25).
    files: ['src/modules/**/*.ts'],
    ignores: ['src/modules/*/rest/**', 'src/modules/*/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'fastify', message: 'Only a module\'s rest/ adapter and its index.ts (route registration) speak Fastify; return values the adapter writes.' }] },
      ],
    },
  },
  {
    files: ['src/cli/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
);
