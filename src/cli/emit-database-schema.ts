import 'reflect-metadata';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrations } from '../../migrations/index.js';
import { entities, sqlDefinitions } from '../modules/index.js';
import { startEmbeddedPostgres } from '../platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../platform/db/orm.js';
import { dumpSchema } from '../platform/db/schema-dump.js';
import { createLogger } from '../platform/logger.js';

// `npm run db:emit` writes schema/database.sql, the schema a fresh database has after every migration
// and SQL definition; `npm run db:check` fails when the committed file differs. Built on a throwaway
// embedded PostgreSQL, never on DATABASE_URL or DATA_DIR.
const args = process.argv.slice(2);
const check = args.includes('--check');
const target = args.find((arg) => !arg.startsWith('--')) ?? 'schema/database.sql';

const HEADER = `-- The database schema after every migration (migrations/) and SQL definition (src/modules/*/sql/).
-- Written by \`npm run db:emit\` from PostgreSQL's catalogs; CI fails when it differs (\`npm run db:check\`).
-- Do not edit: change a migration or a definition and emit again.
`;

const logger = createLogger('error');
const dataDir = await mkdtemp(join(tmpdir(), 'gateway-schema-'));
// As root the cluster runs as `postgres`, which must be able to enter the directory.
await chmod(dataDir, 0o755);

async function migratedSchema(): Promise<string> {
  const database = await startEmbeddedPostgres({ dataDir, logger, ephemeral: true });
  try {
    const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
    await migrate(orm, database.url, sqlDefinitions).finally(() => orm.close());
    return `${HEADER}\n${await dumpSchema(database.url)}`;
  } finally {
    await database.stop();
  }
}

let drifted = false;
try {
  const schema = await migratedSchema();
  if (check) {
    drifted = (await readFile(target, 'utf8').catch(() => '')) !== schema;
    if (drifted) console.error(`${target} is out of date with the migrations and SQL definitions: run \`npm run db:emit\` and commit the result.`);
    else console.log(`${target} matches the migrations and SQL definitions.`);
  } else {
    await writeFile(target, schema);
    console.log(`wrote ${target}`);
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
// Not process.exitCode: embedded-postgres's exit hook (async-exit-hook) calls process.exit(0) on beforeExit.
if (drifted) process.exit(1);
