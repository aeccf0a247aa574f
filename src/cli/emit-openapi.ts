import 'reflect-metadata';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrations } from '../../migrations/index.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { entities, sqlDefinitions } from '../modules/index.js';
import { startEmbeddedPostgres } from '../platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../platform/db/orm.js';
import { createLogger } from '../platform/logger.js';

// `npm run openapi:emit` writes the document `/openapi.json` serves; `npm run openapi:check` fails when
// the committed file differs. Unlike the SDL, the document comes from the built app (routes register
// next to services that open connections at start), so it is built on a throwaway embedded PostgreSQL,
// never on DATABASE_URL or DATA_DIR: emitting must not write into anyone's database.
const args = process.argv.slice(2);
const check = args.includes('--check');
const target = args.find((arg) => !arg.startsWith('--')) ?? 'schema/openapi.json';

// Only failures: the notices of a normal start (mail goes to the log, …) say nothing about the document.
const logger = createLogger('error');
const dataDir = await mkdtemp(join(tmpdir(), 'gateway-openapi-'));
// As root the cluster runs as `postgres`, which must be able to enter the directory.
await chmod(dataDir, 0o755);

async function servedDocument(): Promise<string> {
  const database = await startEmbeddedPostgres({ dataDir, logger, ephemeral: true });
  try {
    const migrator = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
    await migrate(migrator, database.url, sqlDefinitions).finally(() => migrator.close());
    const config = loadConfig({ DATABASE_URL: database.url, PRICE_PROVIDERS: '' });
    const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, timeouts: config.databaseTimeouts });
    try {
      const app = await buildApp({ config, orm, logger, databaseUrl: database.url, jobs: false });
      try {
        const response = await app.inject({ method: 'GET', url: '/openapi.json' });
        if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}: ${response.body}`);
        return `${JSON.stringify(response.json(), null, 2)}\n`;
      } finally {
        await app.close();
      }
    } finally {
      await orm.close(true);
    }
  } finally {
    await database.stop();
  }
}

let drifted = false;
try {
  const document = await servedDocument();
  if (check) {
    drifted = (await readFile(target, 'utf8').catch(() => '')) !== document;
    if (drifted) console.error(`${target} is out of date with the route schemas: run \`npm run openapi:emit\` and commit the result.`);
    else console.log(`${target} matches the code.`);
  } else {
    await writeFile(target, document);
    console.log(`wrote ${target}`);
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
// Not process.exitCode: embedded-postgres's exit hook (async-exit-hook) calls process.exit(0) on beforeExit.
if (drifted) process.exit(1);
