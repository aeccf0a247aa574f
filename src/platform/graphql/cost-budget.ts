import type pg from 'pg';
import { sha256Hex } from '../auth/credentials.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CounterSeries } from '../metrics/families.js';
import type { Metrics } from '../metrics/metrics.js';

/** The caller's budget as an answer reports it. */
export interface BudgetStatus {
  /** Cost points per window (GRAPHQL_COST_PER_MIN). */
  readonly limit: number;
  /** Points left in this window, after this operation. */
  readonly remaining: number;
  /** Seconds until the window ends and the whole budget is back. */
  readonly resetSeconds: number;
  /** Points given back per minute: the whole budget at the start of each one-minute window. */
  readonly refillPerMinute: number;
}

/** `extensions.cost` of a GraphQL answer. */
export interface CostReport {
  /** The cost estimated before execution (IBM cost directives, sizes from arguments). */
  readonly estimated: number;
  /** The cost of what was resolved (list lengths as they came); 0 when nothing ran. */
  readonly actual: number;
  /** Present when the operation was charged: GRAPHQL_COST_PER_MIN is not 0. */
  readonly budget?: BudgetStatus;
}

/** An operation admitted against its caller's budget, charged its estimate until settled. */
export interface Admission {
  readonly key: string;
  readonly estimated: number;
  readonly remaining: number;
  /** When the window it was charged to ends (ms since the epoch): a refund after it has nothing to go back to. */
  readonly windowEnds: number;
}

/** An operation refused before it runs, by the cost admission: every transport answers it as a request error. */
export class AdmissionRefusal extends AppError {}

/** A refusal that carries its cost and when to retry in `extensions` (GraphQL) besides its code. */
export class CostRefusal extends AdmissionRefusal {
  constructor(
    message: string,
    readonly extensions: { readonly cost: CostReport; readonly retryAfterSeconds: number },
  ) {
    super('rate_limited', message);
  }
}

const WINDOW_MS = 60_000;
/**
 * The share of the budget one process may admit for one caller without asking PostgreSQL (S in
 * docs/graphql.md): across P processes a caller can spend at most (P − 1) × S past its budget.
 */
export const LOCAL_SHARE_OF_BUDGET = 0.1;
/** How long points admitted (or given back) in a process wait before they are written, many callers in one statement. */
export const RECONCILE_INTERVAL_MS = 50;
/** Callers one reconciliation writes at most (the rest leave in the next, at once). */
const CALLERS_PER_STATEMENT = 500;
/** Callers a process keeps a view of; past it the least recently added clean ones are forgotten (they ask PostgreSQL again). */
export const MAX_CALLERS = 100_000;
/** Expired rows are deleted this often, an hour after their window ended (as rate-limiter-flexible does for the REST budgets). */
const CLEAR_EXPIRED_EVERY_MS = 300_000;
/** The rows' keys, as rate-limiter-flexible named them before (`<keyPrefix>:<key>`): a deploy keeps every caller's minute. */
const KEY_PREFIX = 'graphql_cost:';

/**
 * Adds each caller's points to its row of the current window (a window that ended starts again with
 * them) and answers every row as it now is. Keys come sorted, so two processes lock rows in one order.
 */
const RECONCILE = `
  insert into rate_limits as r (key, points, expire)
  select key, delta, $3::bigint + ${WINDOW_MS} from unnest($1::varchar[], $2::int[]) as input(key, delta)
  on conflict (key) do update set
    points = case when r.expire <= $3 then excluded.points else r.points + excluded.points end,
    expire = case when r.expire <= $3 then excluded.expire else r.expire end
  returning key, points, expire`;

/** Adds `request` points only if they fit in what the window has left; no row answered: they did not. */
const CHARGE_IF_IT_FITS = `
  insert into rate_limits as r (key, points, expire) values ($1, $2, $3::bigint + ${WINDOW_MS})
  on conflict (key) do update set
    points = case when r.expire <= $3 then excluded.points else r.points + excluded.points end,
    expire = case when r.expire <= $3 then excluded.expire else r.expire end
  where r.expire <= $3 or r.points + $2 <= $4
  returning points, expire`;
// $4: the budget less this process's own unsent points of the caller.

const CLEAR_EXPIRED = `delete from rate_limits where key like '${KEY_PREFIX}%' and expire < $1`;

/** What this process knows of one caller's window. */
interface CallerView {
  /** The window's points as PostgreSQL last answered them (every process's written points); undefined: not known. */
  written: number | undefined;
  /** When that window ends (ms since the epoch). */
  windowEnds: number;
  /** Points admitted (less points given back) here and not yet sent: this process's part PostgreSQL does not know. */
  unsent: number;
  /** While a statement carries this caller: no operation of the caller is admitted meanwhile. */
  inFlight: Promise<void> | undefined;
  /** Admissions waiting for the next reconciliation to learn the window: resolved when it answered. */
  waiting: { readonly answered: Promise<void>; readonly resolve: () => void } | undefined;
  /** Why the last reconciliation carrying this caller failed (an admission waiting on it fails with it). */
  failure: unknown;
}

/**
 * GraphQL cost points per caller and minute, shared by every process through PostgreSQL's
 * `rate_limits` table (the REST budgets' table), charged in the process.
 *
 * Each process keeps a view of each caller's window: its points as PostgreSQL last answered them
 * (`written`) and the points it admitted since (`unsent`). An operation is admitted without a round
 * trip when its estimate fits both in what the view has left of the budget and, with what is unsent, in
 * the local share S (LOCAL_SHARE_OF_BUDGET of the budget); after it ran, what it did not use is taken
 * off `unsent`, so a refund is never a statement of its own. Every RECONCILE_INTERVAL_MS the unsent
 * points of every caller leave in one statement, which answers each window as it now is. An operation
 * that does not fit the view (or a caller this process has not seen this minute) waits for that
 * statement, sent at once for every caller waiting, and is decided on what it answers; one larger than S
 * is then charged by PostgreSQL itself, only if it fits. No operation of a caller is admitted while a
 * statement carries that caller.
 *
 * The bound: each process holds at most S of a caller's points PostgreSQL has not seen, and admits only
 * on the window as PostgreSQL answered it after its own points were written. Take the process whose
 * answer is the latest: every point PostgreSQL had then, plus what that process admitted since, fits the
 * budget; the points of every other process that answer lacked are among that process's unsent ones, at
 * most S each. So across P processes a caller spends at most the budget + (P − 1) × S in a window
 * (docs/graphql.md, "Cost"). With `perMinute` 0 nothing is charged and answers report the cost without a
 * budget.
 */
export class CostBudget {
  /** S: points of one caller one process may admit that PostgreSQL has not seen. */
  readonly localShare: number;
  private readonly callers = new Map<string, CallerView>();
  /** Callers waiting for a reconciliation or with points unsent. */
  private readonly pending = new Set<string>();
  private readonly refusals: CounterSeries | undefined;
  private readonly admittedLocally: CounterSeries | undefined;
  private readonly admittedAfterAsking: CounterSeries | undefined;
  private readonly statements: CounterSeries | undefined;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private readonly clearing: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    readonly perMinute: number,
    metrics: Metrics,
    private readonly log: Logger,
    private readonly maxCallers = MAX_CALLERS,
  ) {
    this.localShare = Math.floor(perMinute * LOCAL_SHARE_OF_BUDGET);
    this.refusals = metrics
      .counter('gateway_graphql_cost_refusals_total', 'GraphQL operations refused before running: their estimated cost was more than the caller had left of GRAPHQL_COST_PER_MIN', [])
      .series({});
    const admissions = metrics.counter(
      'gateway_graphql_cost_admissions_total',
      "GraphQL operations admitted against their caller's cost budget, by where that was decided: in the process, without a round trip (`process`), or after asking PostgreSQL (`database`)",
      ['decided'],
    );
    this.admittedLocally = admissions.series({ decided: 'process' });
    this.admittedAfterAsking = admissions.series({ decided: 'database' });
    this.statements = metrics
      .counter('gateway_graphql_cost_statements_total', 'Statements that charged or reconciled GraphQL cost budgets in PostgreSQL (one carries every caller waiting or with points unsent)', [])
      .series({});
    if (perMinute > 0) this.clearing = setInterval(() => void this.clearExpired(), CLEAR_EXPIRED_EVERY_MS).unref();
  }

  get enforced(): boolean {
    return this.perMinute > 0;
  }

  /** Charges `estimated` to `caller` (a credential, or an address key); throws CostRefusal when it does not fit. */
  async admit(caller: string, estimated: number): Promise<Admission | undefined> {
    if (!this.enforced) return undefined;
    const key = KEY_PREFIX + sha256Hex(caller);
    let asked = false;
    for (;;) {
      const view = this.viewOf(key);
      if (view.inFlight) {
        await view.inFlight;
        continue;
      }
      if (view.written !== undefined && view.windowEnds > Date.now()) {
        const used = view.written + view.unsent;
        const fits = used + estimated <= this.perMinute;
        if (fits && view.unsent + estimated <= this.localShare) {
          view.unsent += estimated;
          this.markPending(key, false);
          (asked ? this.admittedAfterAsking : this.admittedLocally)!.inc();
          return { key, estimated, remaining: this.perMinute - used - estimated, windowEnds: view.windowEnds };
        }
        if (asked) {
          // Decided on what PostgreSQL has just answered, with none of this process's points unsent.
          if (!fits && view.unsent <= 0) throw this.refusal(estimated, used, view.windowEnds);
          if (fits && estimated > this.localShare) return this.chargeAtDatabase(key, view, estimated);
          // Otherwise operations of this process admitted while this one waited: ask again.
        }
      }
      await this.ask(key, view);
      asked = true;
    }
  }

  /** Gives back what the operation did not use (with the next reconciliation), and reports its cost. */
  settle(admission: Admission | undefined, estimated: number, actual: number): CostReport {
    if (!admission || !this.enforced) return { estimated, actual };
    const unused = Math.max(0, admission.estimated - actual);
    if (unused > 0 && admission.windowEnds > Date.now()) {
      // A forgotten view (a full map) is made again and learns its window on its next admission.
      this.viewOf(admission.key).unsent -= unused;
      this.markPending(admission.key, false);
    }
    return { estimated, actual, budget: this.status(Math.min(this.perMinute, admission.remaining + unused), secondsUntil(admission.windowEnds)) };
  }

  /** Writes what is unsent and stops the timers (before the pool closes). */
  async close(): Promise<void> {
    if (this.clearing) clearInterval(this.clearing);
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = this.immediate = undefined;
    await this.running;
    if (this.pending.size > 0) await this.run();
    this.closed = true;
  }

  private viewOf(key: string): CallerView {
    let view = this.callers.get(key);
    if (!view) {
      if (this.callers.size >= this.maxCallers) this.forgetSome();
      view = { written: undefined, windowEnds: 0, unsent: 0, inFlight: undefined, waiting: undefined, failure: undefined };
      this.callers.set(key, view);
    }
    return view;
  }

  /** Forgets callers whose window ended, then, while still nearly full, the oldest with nothing unsent or waiting. */
  private forgetSome(): void {
    const now = Date.now();
    for (const [key, view] of this.callers) if (!this.pending.has(key) && !view.inFlight && view.windowEnds <= now) this.callers.delete(key);
    for (const [key, view] of this.callers) {
      if (this.callers.size < this.maxCallers * 0.9) break;
      if (!this.pending.has(key) && !view.inFlight) this.callers.delete(key);
    }
  }

  /** Waits for the next reconciliation, which carries this caller; throws the error of a failed one. */
  private async ask(key: string, view: CallerView): Promise<void> {
    if (!view.waiting) {
      let resolve!: () => void;
      const answered = new Promise<void>((settle) => (resolve = settle));
      view.waiting = { answered, resolve };
    }
    const { answered } = view.waiting;
    this.markPending(key, true);
    await answered;
    if (view.failure !== undefined) throw view.failure;
  }

  private markPending(key: string, now: boolean): void {
    this.pending.add(key);
    if (this.closed || this.running) return; // run() looks again when it ends
    if (now) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.immediate ??= setImmediate(() => void this.run());
    } else if (!this.timer && !this.immediate) {
      this.timer = setTimeout(() => void this.run(), RECONCILE_INTERVAL_MS).unref();
    }
  }

  /** Sends the pending callers, up to CALLERS_PER_STATEMENT a statement, while any admission waits. */
  private run(): Promise<void> {
    this.timer = this.immediate = undefined;
    const running = (async () => {
      do {
        const keys: string[] = [];
        for (const key of this.pending) {
          if (this.callers.get(key)?.inFlight) continue;
          this.pending.delete(key);
          if (this.callers.has(key)) keys.push(key);
          if (keys.length === CALLERS_PER_STATEMENT) break;
        }
        if (keys.length === 0) break;
        await this.send(keys.sort());
      } while (this.anyWaiting());
    })().finally(() => {
      this.running = undefined;
      if (this.pending.size > 0 && !this.closed) {
        if (this.anyWaiting()) this.immediate ??= setImmediate(() => void this.run());
        else this.timer ??= setTimeout(() => void this.run(), RECONCILE_INTERVAL_MS).unref();
      }
    });
    this.running = running;
    return running;
  }

  private anyWaiting(): boolean {
    for (const key of this.pending) if (this.callers.get(key)?.waiting) return true;
    return false;
  }

  private async send(keys: string[]): Promise<void> {
    const views = keys.map((key) => this.callers.get(key)!);
    const deltas = views.map((view) => view.unsent);
    const answered = views.map((view) => view.waiting?.resolve);
    let done!: () => void;
    const inFlight = new Promise<void>((resolve) => (done = resolve));
    for (const view of views) {
      view.unsent = 0;
      view.waiting = undefined;
      view.inFlight = inFlight;
    }
    try {
      this.statements!.inc();
      const { rows } = await this.pool.query<{ key: string; points: number; expire: string }>(RECONCILE, [keys, deltas, Date.now()]);
      const byKey = new Map(rows.map((row) => [row.key, row]));
      for (const view of views) view.failure = undefined;
      keys.forEach((key, i) => {
        const row = byKey.get(key)!;
        views[i]!.written = row.points;
        views[i]!.windowEnds = Number(row.expire);
      });
    } catch (error) {
      // The points stay unsent, for the next reconciliation; an admission waiting on this one fails.
      this.log.warn({ err: error }, 'GraphQL cost budgets could not be reconciled with PostgreSQL');
      views.forEach((view, i) => {
        view.unsent += deltas[i]!;
        view.written = undefined;
        view.failure = error;
        if (view.unsent !== 0) this.pending.add(keys[i]!);
      });
    } finally {
      for (const view of views) view.inFlight = undefined;
      done();
      for (const resolve of answered) resolve?.();
    }
  }

  /** An estimate larger than the local share: PostgreSQL adds it only if it fits what the window has left. */
  private async chargeAtDatabase(key: string, view: CallerView, estimated: number): Promise<Admission> {
    let done!: () => void;
    view.inFlight = new Promise<void>((resolve) => (done = resolve));
    try {
      this.statements!.inc();
      const { rows } = await this.pool.query<{ points: number; expire: string }>(CHARGE_IF_IT_FITS, [key, estimated, Date.now(), this.perMinute - Math.max(0, view.unsent)]);
      const row = rows[0];
      if (!row) throw this.refusal(estimated, view.written! + view.unsent, view.windowEnds);
      view.written = row.points;
      view.windowEnds = Number(row.expire);
      this.admittedAfterAsking!.inc();
      return { key, estimated, remaining: Math.max(0, this.perMinute - row.points - view.unsent), windowEnds: view.windowEnds };
    } finally {
      view.inFlight = undefined;
      done();
    }
  }

  private refusal(estimated: number, used: number, windowEnds: number): CostRefusal {
    this.refusals!.inc();
    const resetSeconds = secondsUntil(windowEnds);
    const remaining = Math.max(0, this.perMinute - used);
    return new CostRefusal(
      `GraphQL cost budget exceeded: this operation is estimated at ${estimated} points and ${remaining} of ${this.perMinute} per minute are left; retry in ${resetSeconds} s`,
      { cost: { estimated, actual: 0, budget: this.status(remaining, resetSeconds) }, retryAfterSeconds: resetSeconds },
    );
  }

  private async clearExpired(): Promise<void> {
    try {
      await this.pool.query(CLEAR_EXPIRED, [Date.now() - 3_600_000]);
    } catch {
      // Not critical: the next sweep deletes them.
    }
  }

  private status(remaining: number, resetSeconds: number): BudgetStatus {
    return { limit: this.perMinute, remaining, resetSeconds, refillPerMinute: this.perMinute };
  }
}

function secondsUntil(windowEnds: number): number {
  return Math.max(1, Math.ceil((windowEnds - Date.now()) / 1000));
}
