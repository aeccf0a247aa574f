import type pg from 'pg';
import { clientSideSettings, closeWhenSilent, connectionSettings, type DatabaseTimeouts } from './timeouts.js';

/**
 * How the pooled connections (DATABASE_URL, the replicas) reach PostgreSQL.
 *
 * - `session`: each connection of a pool is a PostgreSQL session of its own (PostgreSQL itself, or a
 *   session-mode pooler). Session parameters travel in the startup packet; named statements stay
 *   prepared on the connection.
 * - `transaction`: a transaction pooler (PgBouncer `pool_mode = transaction`, RDS Proxy, Supavisor)
 *   gives the server connection to another client after every transaction. Nothing may rely on the
 *   session: no `SET` (it would stay on a connection other clients get next), no LISTEN, no session
 *   advisory lock, no named statement (prepared on one server connection, executed on another) unless
 *   the pooler tracks them itself. The startup packet carries only what every pooler passes on
 *   (user, database), so the session timeouts are the role's defaults (`checkPooledSessionDefaults`).
 *
 * What needs a session (the LISTEN connection, the job queue, migrations) always takes
 * DATABASE_DIRECT_URL.
 */
export type PoolMode = 'session' | 'transaction';

export interface PoolPolicy {
  readonly mode: PoolMode;
  /**
   * Whether named prepared statements may be used. In transaction mode only behind PgBouncer 1.21 or
   * later with `max_prepared_statements` above 0, which re-prepares them on whichever server
   * connection runs them.
   */
  readonly namedStatements: boolean;
}

/** A connection of our own: PostgreSQL itself. */
export const SESSION_POOLING: PoolPolicy = { mode: 'session', namedStatements: true };

/** `pg` pool settings for a pool of `policy`'s kind that holds `timeouts`. */
export function pooledConnectionSettings(timeouts: DatabaseTimeouts, policy: PoolPolicy): pg.PoolConfig {
  // PgBouncer before 1.20 refuses a startup parameter it does not know ("unsupported startup
  // parameter"), and with ignore_startup_parameters it drops it silently: the timeouts would be lost.
  return policy.mode === 'session' ? connectionSettings(timeouts) : clientSideSettings(timeouts);
}

/** Sets up every connection a pool opens for `policy`: dropped when silent, statements unnamed when they must be. */
export function preparePooledConnections(pool: pg.Pool, policy: PoolPolicy): void {
  pool.on('connect', (client) => {
    closeWhenSilent(client);
    if (!policy.namedStatements) sendStatementsUnnamed(client);
  });
}

/**
 * Strips the name from every statement the client sends, whoever builds it (our named statements,
 * rate-limiter-flexible's): PostgreSQL then parses it as the unnamed statement, which lives only until
 * the next one on that connection, as a transaction pooler needs.
 */
export function sendStatementsUnnamed(client: pg.Client | pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (first: unknown, ...rest: unknown[]) => {
    if (first && typeof first === 'object' && 'name' in first && !('submit' in first)) {
      const { name: _name, ...unnamed } = first as pg.QueryConfig;
      return query(unnamed, ...rest);
    }
    return query(first, ...rest);
  };
}

interface SessionDefault {
  readonly setting: 'statement_timeout' | 'lock_timeout' | 'idle_in_transaction_session_timeout';
  readonly variable: string;
  readonly ms: number;
}

/**
 * Behind a transaction pooler the session timeouts cannot be sent per connection: they are the
 * server's defaults for the role (`ALTER ROLE … SET`) or what the pooler sets on its server
 * connections (PgBouncer's `connect_query`). Checked once at start through the pool: a connection
 * without them would let a stuck statement hold a server connection every client shares. Throws an
 * error that says what to run.
 */
export async function checkPooledSessionDefaults(pool: pg.Pool, timeouts: DatabaseTimeouts, policy: PoolPolicy): Promise<void> {
  if (policy.mode !== 'transaction') return;
  const wanted: SessionDefault[] = [
    { setting: 'statement_timeout', variable: 'DB_STATEMENT_TIMEOUT_MS', ms: timeouts.statementMs },
    { setting: 'lock_timeout', variable: 'DB_LOCK_TIMEOUT_MS', ms: timeouts.lockMs },
    { setting: 'idle_in_transaction_session_timeout', variable: 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', ms: timeouts.idleInTransactionMs },
  ];
  // pg_settings gives these in milliseconds whatever unit they were set in.
  const { rows } = await pool.query<{ name: string; setting: string; role: string; database: string }>(
    `select name, setting, current_user as role, current_database() as database from pg_settings where name = any($1)`,
    [wanted.map((entry) => entry.setting)],
  );
  const found = new Map(rows.map((row) => [row.name, Number(row.setting)]));
  const wrong = wanted.filter((entry) => found.get(entry.setting) !== entry.ms);
  if (wrong.length === 0) return;
  const { role, database } = rows[0] ?? { role: '<role>', database: '<database>' };
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  throw new Error(
    `DATABASE_POOL_MODE=transaction: the pooled connections run with ${wrong.map((entry) => `${entry.setting}=${found.get(entry.setting) ?? '?'}`).join(', ')}, ` +
      `not ${wrong.map((entry) => `${entry.ms} (${entry.variable})`).join(', ')}. A transaction pooler cannot carry per-client settings: ` +
      `make them the role's defaults (${wrong.map((entry) => `ALTER ROLE ${quote(role)} IN DATABASE ${quote(database)} SET ${entry.setting} = ${entry.ms};`).join(' ')}) ` +
      `or set them in the pooler's connect_query, or change the DB_* variables to match.`,
  );
}
