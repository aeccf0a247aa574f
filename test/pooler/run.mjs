// `npm run test:pooler`: the tests in jest.pooler.config.js with PgBouncer (transaction mode) between
// every gateway and PostgreSQL. Says so and fails when pgbouncer is not installed.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { findPgBouncer, PGBOUNCER_MISSING } from '../support/pgbouncer.mjs';

if (!(await findPgBouncer())) {
  console.error(PGBOUNCER_MISSING);
  process.exit(1);
}
// Its own throwaway PostgreSQL always: the run changes its role's defaults.
const { DATABASE_URL: _ignored, ...env } = process.env;
const jest = createRequire(import.meta.url).resolve('jest/bin/jest');
const child = spawn(process.execPath, [jest, '--config', 'jest.pooler.config.js', ...process.argv.slice(2)], {
  env: { ...env, NODE_OPTIONS: '--experimental-vm-modules' },
  stdio: 'inherit',
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
