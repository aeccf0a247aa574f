import { AsyncLocalStorage } from 'node:async_hooks';
import { PostgreSqlDriver, type PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { ConnectionType } from '@mikro-orm/core';
import type pg from 'pg';
import { replicaRead } from './read-your-writes.js';

/** The replica (its index) the ORM's reads go to while a routed read runs. */
const routedReplica = new AsyncLocalStorage<number | undefined>();

/**
 * MikroORM's PostgreSQL driver with replicas it picks from only when told. MikroORM sends a read to a
 * random replica; here every read goes to the primary except inside `ormReplicaRead`, which sends the
 * ORM's reads to the replica the caller's floor allows (read-your-writes.ts). Raw `em.execute` reads
 * pass `{ connectionType: 'read' }` to follow it.
 */
export class ReplicaRoutingDriver extends PostgreSqlDriver {
  override getConnection(type: ConnectionType = 'write'): PostgreSqlConnection {
    const index = type === 'read' ? routedReplica.getStore() : undefined;
    return (index === undefined ? undefined : this.replicas[index]) ?? this.connection;
  }

  /** The replicas' `pg` pools, in DATABASE_REPLICA_URLS order: named statements share them with the ORM. */
  async replicaPools(): Promise<pg.Pool[]> {
    return Promise.all(this.replicas.map(async (connection) => (await connection.getNativeClient()) as pg.Pool));
  }
}

/**
 * Runs ORM reads (`em.find`, `em.count`, `em.execute(…, { connectionType: 'read' })`) as one replica
 * read: on a replica that has replayed the caller's last write, else on the primary. `work` may run
 * twice (a replica that fails mid-read, then the primary): it must only read.
 */
export function ormReplicaRead<T>(work: () => Promise<T>): Promise<T> {
  return replicaRead((target) => routedReplica.run(target.replica?.index, work));
}
