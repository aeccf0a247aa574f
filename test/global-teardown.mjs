import pg from 'pg';

export default async function globalTeardown() {
  if (globalThis.__embeddedPostgres) {
    await globalThis.__embeddedPostgres.stop();
    return;
  }
  const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${process.env.TEST_TEMPLATE_DATABASE} with (force)`);
  await admin.end();
}
