import { MikroORM, type Options } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import { Migrator } from '@mikro-orm/migrations';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import type { Logger } from '../logger.js';
import { silentWorkerLogger } from '../jobs/worker-logger.js';
import type { DatabaseTimeouts } from './timeouts.js';
import { pooledConnectionSettings, preparePooledConnections, SESSION_POOLING, type PoolPolicy } from './pooling.js';
import { applySqlDefinitions, type SqlDefinition } from './sql-definitions.js';
import { currentUnitOfWork } from './unit-of-work.js';
import { ReplicaRoutingDriver } from './replica-routing.js';

export type Orm = MikroORM;

export interface OrmOptions {
  clientUrl: string;
  entities: NonNullable<Options['entities']>;
  migrations: NonNullable<NonNullable<Options['migrations']>['migrationsList']>;
  logger: Logger;
  poolMax?: number;
  /** Bounds on the pool's connections. None for migrations, which may rightly run long. */
  timeouts?: DatabaseTimeouts;
  /** How the pool reaches PostgreSQL (pooling.ts); a session of its own unless said otherwise. */
  pooling?: PoolPolicy;
  /** Hot standbys, in DATABASE_REPLICA_URLS order; reads go to them only through `ormReplicaRead`. */
  replicas?: readonly { name: string; url: string }[];
  /** Sees every SQL statement the ORM sends; tests count statements with it. */
  onQuery?: (sql: string) => void;
}

/** Connects MikroORM to PostgreSQL. The entity list and migrations come from the modules, not from platform. */
export async function createOrm(options: OrmOptions): Promise<Orm> {
  const log = options.logger.child({ component: 'orm' });
  const pooling = options.pooling ?? SESSION_POOLING;
  // The ORM's own root entity manager, known once init returns; the context function reads it later.
  const created: { root?: MikroORM['em'] } = {};
  const orm = await MikroORM.init({
    clientUrl: options.clientUrl,
    ...(options.replicas?.length
      ? { driver: ReplicaRoutingDriver, replicas: options.replicas.map((replica) => ({ name: replica.name, clientUrl: replica.url })), preferReadReplicas: true }
      : {}),
    entities: options.entities,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: true },
    pool: { min: 0, max: options.poolMax ?? 20 },
    driverOptions: options.timeouts
      ? { ...pooledConnectionSettings(options.timeouts, pooling), onPoolCreated: (pool: pg.Pool) => preparePooledConnections(pool, pooling) }
      : // Migrations: a role may carry the request timeouts as its defaults (behind a transaction pooler it must).
        { options: '-c statement_timeout=0 -c idle_in_transaction_session_timeout=0' },
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
