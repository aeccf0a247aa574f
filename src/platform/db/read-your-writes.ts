import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import type pg from 'pg';
import { sha256Hex, type PresentedCredential } from '../auth/credentials.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CounterFamily, CounterSeries } from '../metrics/families.js';
import type { Metrics } from '../metrics/metrics.js';
import { isDatabaseUnavailable } from './pg-errors.js';
import type { ReplicaEndpoint, ReplicaSet } from './replicas.js';
import { laterWalPosition, parseWalPosition } from './wal-position.js';
import { WriteBatcher } from './write-batcher.js';
import type { AfterCommit } from './after-commit.js';

/**
 * Read-your-writes over read replicas.
 *
 * Glossary:
 * - consistency token: the primary's WAL position after a write committed, `16/B374D848`. Every write
 *   request answers one (header `X-Consistency-Token`, GraphQL `extensions.consistencyToken`); a
 *   client may send it back in the same header.
 * - floor: the position a replica must have replayed before it may answer a caller: the later of the
 *   token the caller sent and the one remembered for its credential (any process's last write with it).
 * - replica read: a read that may be served by a replica past the floor (lists, availability,
 *   free/busy, feeds, directory reads), otherwise by the primary.
 *
 * The token is `pg_current_wal_insert_lsn()` read in a statement that starts after the write's commit
 * returned: the commit record was inserted before that, so a standby that replayed up to the token
 * shows the write. (Read inside the write's transaction it would lie before the commit record; the
 * flush position could too under `synchronous_commit = off`.) Tokens of writes that finish together
 * leave in one statement (AfterCommit, with their NOTIFYs), which also remembers them per credential.
 */
export const CONSISTENCY_TOKEN_HEADER = 'x-consistency-token';

/** The unit of work a request (or a GraphQL operation) runs in, as far as reads and writes go. */
interface ReadScope {
  readonly consistency: ReadYourWrites;
  readonly credential: PresentedCredential;
  /** The credential as the token table keys it (its SHA-256), worked out when first needed. */
  credentialKey?: string | undefined;
  /** The token the client sent back. */
  readonly presented: bigint | undefined;
  /** Writes: its reads stay on the primary (they must see what it just wrote) and it answers a token. */
  writes: boolean;
  floor?: Promise<bigint | undefined>;
  /** The token answered after its last write. */
  token?: string;
  /** Where the token goes as a header once known (also for answers the handler writes itself, MCP). */
  readonly response: ServerResponse | undefined;
}

const scopes = new AsyncLocalStorage<ReadScope>();

/** A unit of work as `ReadYourWrites.unit` made it; opaque to callers. */
export type ReadUnit = object;

/** Where one replica read went. */
export type ReadTarget = { readonly replica: ReplicaEndpoint } | { readonly replica?: undefined };
const PRIMARY: ReadTarget = {};

/** Why a replica read went where it went (metric label). */
type Route = 'replica' | 'write_request' | 'no_replica_serving' | 'replica_behind_floor' | 'replica_failed' | 'outside_request';

export interface ScopeInit {
  credential: PresentedCredential;
  /** The X-Consistency-Token the client sent, as sent. */
  presentedToken: string | undefined;
  writes: boolean;
  response?: ServerResponse;
}

/**
 * SQLSTATEs of a read that a standby could not serve but the primary can: 40001 is how a standby
 * cancels a query that conflicts with replay, 57P04 a database dropped under it.
 */
const STANDBY_REFUSALS = new Set(['40001', '57P04']);
/** Errors of the read itself, which the primary would give too. */
const OWN_TIMEOUTS = new Set(['57014', '55P03']);

function code(error: unknown): string | undefined {
  const value = (error as { code?: unknown } | null)?.code;
  return typeof value === 'string' ? value : undefined;
}

/** A replica read that failed because of the replica, not the read: the primary serves it instead. */
function replicaFailure(error: unknown): 'gone' | 'refused' | undefined {
  const sqlState = code(error);
  if (sqlState && STANDBY_REFUSALS.has(sqlState)) return 'refused';
  if (sqlState && OWN_TIMEOUTS.has(sqlState)) return undefined;
  return isDatabaseUnavailable(error) ? 'gone' : undefined;
}

export interface ReadYourWritesOptions {
  /** How long a credential's token is remembered; past it every serving replica has replayed it. */
  rememberForMs: number;
}

/**
 * Answers write requests with their consistency token, remembers it per credential across
 * processes (table `consistency_tokens`, unlogged), and routes replica reads.
 */
export class ReadYourWrites {
  /**
   * Floors looked up together: one statement for every read that arrived while the previous one was
   * out. Each lookup still starts after its read arrived, so it sees every write acknowledged before.
   */
  private readonly remembered = new WriteBatcher<string, Map<string, bigint>>((keys) => this.rememberedPositions(keys));
  private readonly routes: CounterFamily;
  private readonly routeSeries = new Map<Route, CounterSeries>();
  private pruner: NodeJS.Timeout | undefined;

  constructor(
    /** The primary's pool (the ORM's). */
    private readonly primary: pg.Pool,
    /** Issues the tokens, in one statement with the NOTIFYs of the same writes. */
    private readonly afterCommit: AfterCommit,
    /** Undefined without DATABASE_REPLICA_URLS: every read is the primary's, tokens are still answered. */
    private readonly replicas: ReplicaSet | undefined,
    private readonly options: ReadYourWritesOptions,
    metrics: Metrics,
    private readonly logger: Logger,
  ) {
    this.routes = metrics.counter('gateway_db_replica_reads_total', 'Reads that a replica may serve, by where they went: replica, or the primary and why', ['route']);
  }

  /** The unit for a request; a malformed token is a validation error (400 naming the header). */
  unit(init: ScopeInit): ReadUnit {
    let presented: bigint | undefined;
    if (init.presentedToken !== undefined) {
      presented = parseWalPosition(init.presentedToken.trim());
      if (presented === undefined) {
        throw AppError.validation({ 'X-Consistency-Token': 'must be a consistency token as this server answered it (a WAL position such as 16/B374D848)' });
      }
    }
    const scope: ReadScope = {
      consistency: this,
      credential: init.credential,
      presented,
      writes: init.writes,
      response: init.response,
    };
    return scope;
  }

  /** Runs `work` in `unit` (an HTTP request's continuation, a GraphQL operation). */
  run<T>(unit: ReadUnit, work: () => T): T {
    return scopes.run(unit as ReadScope, work);
  }

  /**
   * Runs a replica read: on a replica that has replayed the caller's floor, else on the primary. A
   * replica that fails the read is left out and the primary answers instead. `work` may run twice
   * (replica, then primary): it must only read.
   */
  async read<T>(work: (target: ReadTarget) => Promise<T>): Promise<T> {
    const scope = scopes.getStore();
    if (!this.replicas || !scope) return this.onPrimary(work, this.replicas ? 'outside_request' : undefined);
    if (scope.writes) return this.onPrimary(work, 'write_request');
    if (!this.replicas.anyServing()) return this.onPrimary(work, 'no_replica_serving');
    const floor = await (scope.floor ??= this.floorOf(scope));
    const replica = this.replicas.pick(floor);
    if (!replica) return this.onPrimary(work, 'replica_behind_floor');
    try {
      const answer = await work({ replica });
      this.count('replica');
      return answer;
    } catch (error) {
      const failure = replicaFailure(error);
      if (!failure) throw error;
      if (failure === 'gone') this.replicas.failed(replica, error);
      this.logger.debug({ err: error, replica: replica.name }, 'a replica read failed; the primary answers it');
      return this.onPrimary(work, 'replica_failed');
    }
  }

  private async onPrimary<T>(work: (target: ReadTarget) => Promise<T>, route: Route | undefined): Promise<T> {
    if (route) this.count(route);
    return work(PRIMARY);
  }

  /** The caller's floor: what it sent back, or the last write any process remembers for its credential, whichever is later. */
  private async floorOf(scope: ReadScope): Promise<bigint | undefined> {
    const key = credentialKey(scope);
    if (key === undefined) return scope.presented;
    const positions = await this.remembered.add(key);
    return laterWalPosition(scope.presented, positions.get(key));
  }

  private async rememberedPositions(keys: string[]): Promise<Map<string, bigint>> {
    const { rows } = await this.primary.query<{ credential_hash: string; position: string }>({
      name: 'consistency_tokens_of',
      text: 'select credential_hash, position::text as position from consistency_tokens where credential_hash = any($1::text[])',
      values: [[...new Set(keys)]],
    });
    return new Map(rows.map((row) => [row.credential_hash, parseWalPosition(row.position)!]));
  }

  /**
   * After the current unit's write committed: its consistency token, remembered for its credential
   * and set as the response's header. Outside a unit (graphql-ws), for `credential`.
   */
  async afterWrite(credential?: PresentedCredential): Promise<string> {
    const scope = scopes.getStore();
    const key = scope ? credentialKey(scope) : credential?.kind === 'token' ? sha256Hex(credential.token) : undefined;
    const token = await this.afterCommit.walPositionAfterCommit(key);
    if (scope) {
      scope.token = token;
      if (scope.response && !scope.response.headersSent) scope.response.setHeader(CONSISTENCY_TOKEN_HEADER, token);
    }
    return token;
  }

  /** Deletes tokens no serving replica can still be behind; call once at start, it repeats itself. */
  startPruning(everyMs = 60_000): void {
    const prune = () =>
      this.primary
        .query({
          name: 'prune_consistency_tokens',
          text: `delete from consistency_tokens where written_at < now() - make_interval(secs => $1::double precision / 1000)`,
          values: [this.options.rememberForMs],
        })
        .catch((error: unknown) => this.logger.debug({ err: error }, 'pruning consistency tokens failed'));
    this.pruner = setInterval(() => void prune(), everyMs).unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  private count(route: Route): void {
    let series = this.routeSeries.get(route);
    if (!series) this.routeSeries.set(route, (series = this.routes.series({ route })));
    series.inc();
  }
}

function credentialKey(scope: ReadScope): string | undefined {
  if (!('credentialKey' in scope)) scope.credentialKey = scope.credential.kind === 'token' ? sha256Hex(scope.credential.token) : undefined;
  return scope.credentialKey;
}

/** The unit of work's read-your-writes state, when there is one. */
function currentScope(): ReadScope | undefined {
  return scopes.getStore();
}

/** Marks the current unit as writing: its later replica reads go to the primary, and it answers a token. */
export function writingNow(): void {
  const scope = currentScope();
  if (scope) scope.writes = true;
}

/** Whether the current unit writes and has not answered its token yet. */
export function tokenOwed(): boolean {
  const scope = currentScope();
  return scope !== undefined && scope.writes && scope.token === undefined;
}

/** The token the current unit answered after its last write. */
export function answeredToken(): string | undefined {
  return currentScope()?.token;
}

/** After the current unit's write committed: its token (see ReadYourWrites.afterWrite); undefined outside a unit. */
export async function tokenAfterWrite(): Promise<string | undefined> {
  const scope = currentScope();
  return scope ? scope.consistency.afterWrite() : undefined;
}

/** Runs a replica read through the current unit's router; outside a unit, on the primary. */
export function replicaRead<T>(work: (target: ReadTarget) => Promise<T>): Promise<T> {
  const scope = currentScope();
  return scope ? scope.consistency.read(work) : work(PRIMARY);
}
