import pg from 'pg';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { pooledConnectionSettings, preparePooledConnections, type PoolPolicy } from './pooling.js';
import type { DatabaseTimeouts } from './timeouts.js';
import { formatWalPosition, parseWalPosition } from './wal-position.js';

/** A hot standby reads may go to, by the name metrics and the status report give it. */
export interface ReplicaEndpoint {
  readonly name: string;
  readonly url: string;
  /** Its place in DATABASE_REPLICA_URLS, which is also its place among the ORM's replica connections. */
  readonly index: number;
  /** The pool routed reads use (the ORM's connection to it, so named statements and the ORM share it). */
  readonly pool: pg.Pool;
}

/** How metrics and the status report name the replica at `index` of DATABASE_REPLICA_URLS (never by its address). */
export function replicaName(index: number): string {
  return `replica-${index + 1}`;
}

/** DATABASE_REPLICA_URLS as the ORM takes them. */
export function namedReplicas(urls: readonly string[]): { name: string; url: string }[] {
  return urls.map((url, index) => ({ name: replicaName(index), url }));
}

/** One primary position and when the primary was there. */
export interface PrimarySample {
  readonly at: number;
  readonly position: bigint;
}

/**
 * How far behind the primary a standby that has replayed up to `replayed` was at `at`, in
 * milliseconds, from the primary's positions sampled before: at the newest sample at or below
 * `replayed` the primary had nothing the standby lacks, so nothing the standby shows is older than
 * that. An idle primary keeps a caught-up standby at 0 whatever the time since the last commit (which
 * `now() - pg_last_xact_replay_timestamp()` would report). Behind every sample: at least since the
 * oldest, reported as that.
 */
export function replicaLagMs(samples: readonly PrimarySample[], replayed: bigint, at: number): number {
  for (let i = samples.length - 1; i >= 0; i--) {
    const sample = samples[i]!;
    if (sample.position <= replayed) return Math.max(0, at - sample.at);
  }
  return samples.length ? Math.max(0, at - samples[0]!.at) : 0;
}

export type ReplicaStatus = 'operational' | 'degraded' | 'down';

export interface ReplicaHealth {
  readonly name: string;
  /** operational: serving reads; degraded: reachable but lagging past the bound (or not yet replaying); down: unreachable or not a standby. */
  readonly status: ReplicaStatus;
  /** Staleness of what it shows, in ms (see replicaLagMs); null when unknown. */
  readonly lagMs: number | null;
  /** WAL it has yet to replay of what the primary had at the last check, in bytes; null when unknown. */
  readonly behindBytes: number | null;
  /** Its replay position (`pg_last_wal_replay_lsn()`), null when unknown. */
  readonly replayed: string | null;
  /** Why it is left out, null while it serves: no address or message from the driver (the status report is public). */
  readonly reason: string | null;
}

interface ReplicaState {
  readonly endpoint: ReplicaEndpoint;
  /** Its own connection for checks: a saturated read pool must not look like a dead standby. */
  readonly probe: pg.Pool;
  usable: boolean;
  status: ReplicaStatus;
  replayed: bigint | undefined;
  lagMs: number | undefined;
  behindBytes: bigint | undefined;
  reason: string | undefined;
}

export interface ReplicaSetOptions {
  /** A replica whose lag passes this is left out until it is back under (DATABASE_REPLICA_MAX_LAG_MS). */
  maxLagMs: number;
  /** Time between the end of one check of every replica and the start of the next. */
  checkIntervalMs?: number;
  timeouts: DatabaseTimeouts;
  pooling: PoolPolicy;
}

/** A check that has had no answer after this long counts as a failure (the standby or the network is stuck). */
const CHECK_TIMEOUT_MS = 2_000;
const DEFAULT_CHECK_INTERVAL_MS = 100;

/**
 * The read replicas and what is known of each: checked every 100 ms (its replay position, whether it
 * is a standby at all) against the primary's position sampled just before, which gives its lag. A
 * replica serves reads while it answers, is a standby and lags at most `maxLagMs`; one that fails a
 * check or a read is left out and comes back by itself at the first good check.
 *
 * The replay position a check saw is a floor for everything read from that replica later: positions
 * only grow while the standby runs, and a standby that restarts drops its connections (the next read
 * fails and is retried on the primary, the next check sees the new position).
 */
export class ReplicaSet {
  private readonly states: ReplicaState[];
  private samples: PrimarySample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private nextPick = 0;
  private readonly checkIntervalMs: number;

  constructor(
    endpoints: readonly ReplicaEndpoint[],
    /** The primary's current WAL insert position. */
    private readonly primaryPosition: () => Promise<bigint>,
    private readonly options: ReplicaSetOptions,
    private readonly logger: Logger,
    metrics: Metrics,
  ) {
    this.checkIntervalMs = options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
    this.states = endpoints.map((endpoint) => {
      const probe = new pg.Pool({ ...pooledConnectionSettings(options.timeouts, options.pooling), connectionString: endpoint.url, max: 1 });
      preparePooledConnections(probe, options.pooling);
      probe.on('error', () => undefined); // an idle probe connection the standby dropped; the next check reports it
      return { endpoint, probe, usable: false, status: 'down' as ReplicaStatus, replayed: undefined, lagMs: undefined, behindBytes: undefined, reason: 'not checked yet' };
    });
    metrics.gauge('gateway_db_replica_lag_seconds', 'How stale each read replica is: time since the primary last had nothing the replica lacks (absent while unknown)', ['replica'], (set) => {
      for (const state of this.states) if (state.lagMs !== undefined) set(state.lagMs / 1000, { replica: state.endpoint.name });
    });
    metrics.gauge('gateway_db_replica_behind_bytes', 'WAL each read replica has yet to replay of what the primary had at the last check (absent while unknown)', ['replica'], (set) => {
      for (const state of this.states) if (state.behindBytes !== undefined) set(Number(state.behindBytes), { replica: state.endpoint.name });
    });
    metrics.gauge('gateway_db_replica_serving', 'Whether each read replica is serving reads (1) or left out (0)', ['replica'], (set) => {
      for (const state of this.states) set(state.usable ? 1 : 0, { replica: state.endpoint.name });
    });
  }

  get names(): readonly string[] {
    return this.states.map((state) => state.endpoint.name);
  }

  /** Checks once now (reads may use the replicas from the first request on), then every interval. */
  async start(): Promise<void> {
    await this.checkAll();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.checkAll().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.checkIntervalMs).unref();
  }

  /** Whether any replica serves reads now (no need to work out a caller's floor otherwise). */
  anyServing(): boolean {
    return this.states.some((state) => state.usable);
  }

  /**
   * A replica that serves reads and has replayed at least `floor` (any serving one without a floor),
   * taking turns among those that qualify; undefined when none does.
   */
  pick(floor: bigint | undefined): ReplicaEndpoint | undefined {
    const count = this.states.length;
    for (let i = 0; i < count; i++) {
      const state = this.states[(this.nextPick + i) % count]!;
      if (!state.usable || state.replayed === undefined) continue;
      if (floor !== undefined && state.replayed < floor) continue;
      this.nextPick = (this.nextPick + i + 1) % count;
      return state.endpoint;
    }
    return undefined;
  }

  /** A read could not be served by `endpoint` (it went away): left out until a check finds it again. */
  failed(endpoint: ReplicaEndpoint, error: unknown): void {
    const state = this.states.find((candidate) => candidate.endpoint === endpoint);
    if (!state || !state.usable) return;
    this.leaveOut(state, 'down', `a read failed (${errorKind(error)})`, error);
  }

  health(): ReplicaHealth[] {
    return this.states.map((state) => ({
      name: state.endpoint.name,
      status: state.status,
      lagMs: state.lagMs ?? null,
      behindBytes: state.behindBytes === undefined ? null : Number(state.behindBytes),
      replayed: state.replayed === undefined ? null : formatWalPosition(state.replayed),
      reason: state.usable ? null : (state.reason ?? null),
    }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await Promise.all(this.states.map((state) => state.probe.end()));
  }

  private async checkAll(): Promise<void> {
    let position: bigint;
    try {
      position = await this.primaryPosition();
    } catch (error) {
      // Without the primary's position no lag can be known; reads fail over to the primary anyway.
      this.logger.debug({ err: error }, 'replica check: the primary did not give its position');
      return;
    }
    const sampledAt = performance.now();
    this.samples.push({ at: sampledAt, position });
    // Older samples cannot tell a replica within the bound from one past it.
    const horizon = sampledAt - this.options.maxLagMs - 10 * this.checkIntervalMs;
    while (this.samples.length > 2 && this.samples[0]!.at < horizon) this.samples.shift();
    await Promise.all(this.states.map((state) => this.check(state, position)));
  }

  private async check(state: ReplicaState, primaryPosition: bigint): Promise<void> {
    let row: { standby: boolean; replayed: string | null } | undefined;
    try {
      const result = await state.probe.query<{ standby: boolean; replayed: string | null }>({
        text: 'select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replayed',
        // `pg` reads a per-query query_timeout; its types do not list it.
        query_timeout: CHECK_TIMEOUT_MS,
      } as pg.QueryConfig);
      row = result.rows[0];
    } catch (error) {
      state.lagMs = undefined;
      state.behindBytes = undefined;
      this.leaveOut(state, 'down', `unreachable (${errorKind(error)})`, error);
      return;
    }
    const answeredAt = performance.now();
    // A promoted standby (or a URL that names a primary) has history of its own: never read from it.
    if (!row?.standby) {
      state.replayed = undefined;
      state.lagMs = undefined;
      state.behindBytes = undefined;
      this.leaveOut(state, 'down', 'not a standby (pg_is_in_recovery() is false): promoted, or not a replica of this primary');
      return;
    }
    const replayed = row.replayed === null ? undefined : parseWalPosition(row.replayed);
    if (replayed === undefined) {
      this.leaveOut(state, 'degraded', 'has not replayed any WAL yet');
      return;
    }
    state.replayed = replayed;
    state.lagMs = Math.round(replicaLagMs(this.samples, replayed, answeredAt));
    state.behindBytes = primaryPosition > replayed ? primaryPosition - replayed : 0n;
    if (state.lagMs > this.options.maxLagMs) {
      this.leaveOut(state, 'degraded', `lags ${state.lagMs} ms, over DATABASE_REPLICA_MAX_LAG_MS (${this.options.maxLagMs})`);
      return;
    }
    if (!state.usable) this.logger.info({ replica: state.endpoint.name, lagMs: state.lagMs }, 'read replica serving');
    state.usable = true;
    state.status = 'operational';
    state.reason = undefined;
  }

  private leaveOut(state: ReplicaState, status: ReplicaStatus, reason: string, error?: unknown): void {
    if (state.usable || state.reason === 'not checked yet') this.logger.warn({ replica: state.endpoint.name, reason, err: error }, 'read replica left out');
    state.usable = false;
    state.status = status;
    state.reason = reason;
  }
}

/** An error's SQLSTATE or system code (`57P01`, `ECONNREFUSED`); driver messages name addresses. */
function errorKind(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^[A-Z0-9_]{2,32}$/.test(code)) return code;
  return typeof message === 'string' && /timeout/i.test(message) ? 'no answer in time' : 'connection failed';
}
