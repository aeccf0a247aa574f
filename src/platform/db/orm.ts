import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import { Migrator } from '@mikro-orm/migrations';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import type { Logger } from '../logger.js';
import { silentWorkerLogger } from '../jobs/worker-logger.js';
import { closeSilentConnections, connectionSettings, type DatabaseTimeouts } from './timeouts.js';
import { applySqlDefinitions, type SqlDefinition } from './sql-definitions.js';
import { currentUnitOfWork } from './unit-of-work.js';

export type Orm = MikroORM;

export interface OrmOptions {
  clientUrl: string;
  entities: NonNullable<Options['entities']>;
  migrations: NonNullable<NonNullable<Options['migrations']>['migrationsList']>;
  logger: Logger;
  poolMax?: number;
  /** Bounds on the pool's connections. None for migrations, which may rightly run long. */
  timeouts?: DatabaseTimeouts;
  /** Sees every SQL statement the ORM sends; tests count statements with it. */
  onQuery?: (sql: string) => void;
}

/** Connects MikroORM to PostgreSQL. The entity list and migrations come from the modules, not from platform. */
export async function createOrm(options: OrmOptions): Promise<Orm> {
  const log = options.logger.child({ component: 'orm' });
  // The ORM's own root entity manager, known once init returns; the context function reads it later.
  const created: { root?: MikroORM['em'] } = {};
  const orm = await MikroORM.init({
    clientUrl: options.clientUrl,
    entities: options.entities,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: true },
    pool: { min: 0, max: options.poolMax ?? 20 },
    ...(options.timeouts ? { driverOptions: { ...connectionSettings(options.timeouts), onPoolCreated: closeSilentConnections } } : {}),
    // Request handlers must work on a fork (their unit of work); touching the global EM is a bug.
    allowGlobalContext: false,
    context: () => (created.root ? currentUnitOfWork(created.root) : undefined),
    forceUtcTimezone: true,
    // Triggers are defined with their functions in the modules' sql/ (sql-definitions.ts), not on entities.
    schemaGenerator: { ignoreTriggers: true },
    ensureDatabase: false,
    migrations: {
      migrationsList: options.migrations,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
    },
    onQuery: (sql) => {
      options.onQuery?.(sql);
      return sql;
    },
    logger: (message) => log.debug(message),
    colors: false,
  });
  created.root = orm.em;
  return orm;
}

/**
 * Applies every pending migration, then the functions and triggers whose definitions changed; returns
 * the names of both that ran. The job queue's own schema (graphile-worker) comes first: our
 * migrations and functions build on it.
 */
export async function migrate(orm: Orm, clientUrl: string, definitions: readonly SqlDefinition[]): Promise<string[]> {
  await runWorkerMigrations({ connectionString: clientUrl, logger: silentWorkerLogger });
  const ran = await orm.migrator.up();
  const defined = await applySqlDefinitions(clientUrl, definitions);
  return [...ran.map((migration) => migration.name), ...defined];
}
