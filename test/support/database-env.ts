/**
 * How a gateway reaches the test database `directUrl`. Under `npm run test:pooler` (TEST_POOLER_URL,
 * test/pooler/global-setup.mjs) its pooled connections go through PgBouncer in transaction mode and
 * what needs a session (LISTEN, the job queue, migrations) goes to PostgreSQL itself; otherwise
 * everything goes to PostgreSQL.
 */
export function databaseEnv(directUrl: string): Record<string, string> {
  const pooler = process.env.TEST_POOLER_URL;
  if (!pooler) return { DATABASE_URL: directUrl };
  const pooled = new URL(pooler);
  pooled.pathname = new URL(directUrl).pathname;
  return { DATABASE_URL: pooled.toString(), DATABASE_DIRECT_URL: directUrl, DATABASE_POOL_MODE: 'transaction' };
}
