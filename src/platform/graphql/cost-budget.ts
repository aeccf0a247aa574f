import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { sha256Hex } from '../auth/credentials.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CounterSeries } from '../metrics/families.js';

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
  readonly resetSeconds: number;
}

/** A refusal that carries its cost and when to retry in `extensions` (GraphQL) besides its code. */
export class CostRefusal extends AppError {
  constructor(
    message: string,
    readonly extensions: { readonly cost: CostReport; readonly retryAfterSeconds: number },
  ) {
    super('rate_limited', message);
  }
}

const WINDOW_SECONDS = 60;

/**
 * GraphQL cost points per caller and minute, kept in PostgreSQL like the REST budgets
 * (rate-limiter-flexible on the shared `rate_limits` table), so every process shares one budget. An
 * operation is charged its estimate before it runs, and refused when that is more than is left (the
 * refused estimate is given back: nothing ran); after it ran, what it did not use (estimate − actual)
 * is given back (Shopify's refund). With `perMinute` 0 nothing is charged and answers report the cost
 * without a budget.
 */
export class CostBudget {
  private readonly limiter: RateLimiterPostgres | undefined;

  constructor(
    pool: pg.Pool,
    readonly perMinute: number,
    private readonly refusals: CounterSeries,
    private readonly log: Logger,
  ) {
    this.limiter =
      perMinute > 0
        ? new RateLimiterPostgres({
            storeClient: pool,
            storeType: 'pool',
            tableName: 'rate_limits',
            tableCreated: true,
            clearExpiredByTimeout: true,
            keyPrefix: 'graphql_cost',
            points: perMinute,
            duration: WINDOW_SECONDS,
          })
        : undefined;
  }

  get enforced(): boolean {
    return this.limiter !== undefined;
  }

  /** Charges `estimated` to `caller` (a credential, or an address key); throws CostRefusal when it does not fit. */
  async admit(caller: string, estimated: number): Promise<Admission | undefined> {
    if (!this.limiter) return undefined;
    const key = sha256Hex(caller);
    let result: RateLimiterRes;
    try {
      result = await this.limiter.consume(key, estimated);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      // consume() counted the points it refused: give them back, the operation does not run.
      const restored = await this.limiter.reward(key, estimated);
      this.refusals.inc();
      const resetSeconds = secondsOf(restored.msBeforeNext);
      const remaining = Math.max(0, restored.remainingPoints);
      throw new CostRefusal(
        `GraphQL cost budget exceeded: this operation is estimated at ${estimated} points and ${remaining} of ${this.perMinute} per minute are left; retry in ${resetSeconds} s`,
        { cost: { estimated, actual: 0, budget: this.status(remaining, resetSeconds) }, retryAfterSeconds: resetSeconds },
      );
    }
    return { key, estimated, remaining: Math.max(0, result.remainingPoints), resetSeconds: secondsOf(result.msBeforeNext) };
  }

  /** Gives back what the operation did not use, and reports its cost. */
  settle(admission: Admission | undefined, estimated: number, actual: number): CostReport {
    if (!admission || !this.limiter) return { estimated, actual };
    const unused = Math.max(0, admission.estimated - actual);
    // Not awaited: the answer need not wait for the refund, whose arithmetic is known here.
    if (unused > 0) this.limiter.reward(admission.key, unused).catch((error: unknown) => this.log.warn({ err: error }, 'GraphQL cost refund failed'));
    return { estimated, actual, budget: this.status(Math.min(this.perMinute, admission.remaining + unused), admission.resetSeconds) };
  }

  private status(remaining: number, resetSeconds: number): BudgetStatus {
    return { limit: this.perMinute, remaining, resetSeconds, refillPerMinute: this.perMinute };
  }
}

function secondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
