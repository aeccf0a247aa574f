// `npm run test:pooler`: the test run's PostgreSQL (global-setup.mjs), with PgBouncer in transaction
// mode in front of it. Every gateway the tests start reaches its database through the pooler
// (test/support/database-env.ts reads TEST_POOLER_URL) and its sessions (LISTEN, the job queue,
// migrations) directly.
import pg from 'pg';
import baseSetup from '../global-setup.mjs';
import { startPgBouncer } from '../support/pgbouncer.mjs';

/**
 * The gateway's session timeouts at their defaults (config.ts): behind a transaction pooler they are
 * the role's, and a gateway that finds others refuses to start (platform/db/pooling.ts).
 */
const ROLE_DEFAULTS = { statement_timeout: 10_000, lock_timeout: 5_000, idle_in_transaction_session_timeout: 30_000 };

/** Server connections per database: far fewer than the clients' pools, so that they are shared. */
const SERVER_CONNECTIONS_PER_DATABASE = 6;

export default async function globalSetup() {
  await baseSetup();
  const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    for (const [setting, value] of Object.entries(ROLE_DEFAULTS)) await admin.query(`alter role current_user set ${setting} = ${value}`);
  } finally {
    await admin.end();
  }
  const pooler = await startPgBouncer({ serverUrl: process.env.TEST_POSTGRES_ADMIN_URL, poolSize: SERVER_CONNECTIONS_PER_DATABASE });
  globalThis.__pgbouncer = pooler;
  process.env.TEST_POOLER_URL = pooler.urlFor('postgres');
}
