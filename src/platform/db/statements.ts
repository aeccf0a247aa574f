import type pg from 'pg';
import type { Orm } from './orm.js';
import { isServerError } from './pg-errors.js';
import { replicaRead } from './read-your-writes.js';


/**
 * A hot-path SQL statement with a name. PostgreSQL parses and plans a named statement once per
 * connection and afterwards only binds and executes it; the ORM sends every statement as new text
 * with its parameters inlined. Each statement lives next to the module that owns it and says why it
 * is hand-written.
 */
export interface NamedStatement<Params extends readonly unknown[], Row> {
  readonly name: string;
  readonly text: string;
  /**
   * A read a hot standby may answer once it has replayed the caller's last write (lists,
   * availability, free/busy, feeds): see read-your-writes.ts. Only reads; it may run twice.
   */
  readonly servedByReplica: boolean;
  /** Type carrier only. */
  readonly _types?: { params: Params; row: Row };
}

export function namedStatement<Params extends readonly unknown[], Row>(
  name: string,
  text: string,
  options: { servedByReplica?: boolean } = {},
): NamedStatement<Params, Row> {
  return { name, text, servedByReplica: options.servedByReplica ?? false };
}

/**
 * Runs named statements on the ORM's own connection pool (one pool, one set of limits), each as one
 * round trip in autocommit; those `servedByReplica` on the pool of the replica the caller's floor
 * allows. Statements are reported to the ORM's `onQuery` hook like its own, so statement-counting
 * tests see them. Behind a transaction pooler they go unnamed (pooling.ts).
 */
export class Statements {
  private constructor(
    /** The ORM's pool (its size and queue are reported as metrics). */
    readonly pool: pg.Pool,
    private readonly onQuery: (sql: string) => void,
  ) {}

  static async forOrm(orm: Orm): Promise<Statements> {
    const pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
    const onQuery = orm.config.get('onQuery') as ((sql: string, params: unknown[]) => string) | undefined;
    return new Statements(pool, (sql) => onQuery?.(sql, []));
  }

  async rows<Params extends readonly unknown[], Row>(statement: NamedStatement<Params, Row>, params: Params): Promise<Row[]> {
    if (!statement.servedByReplica) return this.rowsOn(this.pool, statement, params);
    return replicaRead((target) => this.rowsOn(target.replica?.pool ?? this.pool, statement, params));
  }

  private async rowsOn<Params extends readonly unknown[], Row>(pool: pg.Pool, statement: NamedStatement<Params, Row>, params: Params): Promise<Row[]> {
    this.onQuery(statement.text);
    // Not `pool.query`: it discards the connection on any error, so every refused write (an overlap,
    // a unique key) would cost a new connection and its SCRAM handshake (about 8 ms here). A statement
    // PostgreSQL answered with an error leaves the connection as good as it was.
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      const result = await client.query({ name: statement.name, text: statement.text, values: params as unknown as unknown[] });
      return result.rows as Row[];
    } catch (error) {
      if (!isServerError(error)) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async one<Params extends readonly unknown[], Row>(statement: NamedStatement<Params, Row>, params: Params): Promise<Row | undefined> {
    return (await this.rows(statement, params))[0];
  }
}
