import type pg from 'pg';

/**
 * Bounds on every PostgreSQL connection of the process (the ORM's pool, the job queue's, the rate
 * limiter's, the LISTEN connection), so that a database that stops answering makes requests fail fast
 * instead of hang. Set from DB_* settings (config.ts).
 */
export interface DatabaseTimeouts {
  /** Opening a connection, or waiting for a free one in a pool. */
  readonly connectMs: number;
  /** PostgreSQL cancels a statement that has run this long (57014). */
  readonly statementMs: number;
  /** A statement waiting this long for a lock gives up (55P03). */
  readonly lockMs: number;
  /** PostgreSQL ends a session left idle inside a transaction this long, freeing its locks. */
  readonly idleInTransactionMs: number;
}

/**
 * How long past the statement timeout the client still waits for an answer. A live server has
 * cancelled the statement and said so by then; silence means the connection or the server is gone
 * (a frozen process, a black-holed network), which no server-side timeout can report.
 */
const ANSWER_MARGIN_MS = 2_000;
/** Idle time before TCP keepalive probes start (a peer that vanished while nothing was being sent). */
const KEEPALIVE_DELAY_MS = 10_000;

/**
 * `pg` client and pool settings that hold the timeouts: the client's own bounds, and the server's,
 * sent as session parameters in the startup packet (a session of our own: see pooling.ts for the
 * connections a transaction pooler shares).
 */
export function connectionSettings(timeouts: DatabaseTimeouts): pg.PoolConfig {
  return {
    ...clientSideSettings(timeouts),
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
  };
}

/** The bounds the client keeps by itself, whoever holds the server session. */
export function clientSideSettings(timeouts: DatabaseTimeouts): pg.PoolConfig {
  return {
    connectionTimeoutMillis: timeouts.connectMs,
    query_timeout: timeouts.statementMs + ANSWER_MARGIN_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  };
}

/** The error `pg` gives when `query_timeout` passes without an answer. */
export const isUnansweredQuery = (error: unknown): boolean => error instanceof Error && error.message === 'Query read timeout';

interface ClientInternals {
  connection?: { stream?: { destroy(): void } };
}

/**
 * Closes a client's socket at once. `client.end()` first asks the server politely and waits for it,
 * which a server that stopped answering never does.
 */
export function dropConnection(client: pg.Client): void {
  const stream = (client as unknown as ClientInternals).connection?.stream;
  if (stream) stream.destroy();
  else void client.end().catch(() => undefined);
}

/**
 * Closes a connection whose query went unanswered. `pg`'s `query_timeout` rejects the query but keeps
 * the connection waiting for that answer, so a pool would hand it out again and the next query would
 * wait behind it. Call on every new client (`pool.on('connect', closeWhenSilent)`).
 */
export function closeWhenSilent(client: pg.Client): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (isUnansweredQuery(error)) dropConnection(client);
      });
    }
    return result;
  };
}

/** A pool's clients with `closeWhenSilent` (pools report new clients on 'connect'). */
export function closeSilentConnections(pool: pg.Pool): void {
  pool.on('connect', (client) => closeWhenSilent(client));
}
