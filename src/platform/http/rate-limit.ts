import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { sha256Hex } from '../auth/credentials.js';
import { AppError } from '../errors.js';
import type { CounterFamily, CounterSeries } from '../metrics/families.js';
import type { Metrics } from '../metrics/metrics.js';
import { addressKey } from './client-address.js';

export interface RateLimitPolicy {
  /** Distinguishes counters of different policies in the shared table. */
  name: string;
  points: number;
  durationSeconds: number;
  /** What one point is, for the refusal's message; default "requests". */
  unit?: string;
}

/** A budget after a spend, as the `RateLimit-*` headers tell it (REST writes them; see rate-limit-headers.ts). */
export interface BudgetState {
  readonly limit: number;
  readonly windowSeconds: number;
  readonly remaining: number;
  /** Seconds until the window starts again. */
  readonly resetSeconds: number;
}

/** Of two budgets a request spent, the one to tell the client about: the one with fewer requests left. */
export const tighterBudget = (a: BudgetState, b: BudgetState): BudgetState => (b.remaining < a.remaining ? b : a);

/**
 * Fixed-window request budgets kept in PostgreSQL (rate-limiter-flexible), so every process that
 * shares the database shares the budget. `consume` answers the budget's state after the spend, which
 * an adapter may tell its client, and, once the budget is spent, throws a 429 `rate_limited` error that
 * carries when to retry and the budget (`AppError.retry`), which each transport renders (REST:
 * Retry-After, RateLimit-*; GraphQL: retryAfterSeconds). Services never see a transport's reply.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterPostgres>();
  private readonly refusalsByPolicy = new Map<string, CounterSeries>();
  private readonly refusals: CounterFamily;

  constructor(
    private readonly pool: pg.Pool,
    metrics: Metrics,
  ) {
    this.refusals = metrics.counter('gateway_rate_limit_refusals_total', 'Requests refused with 429 rate_limited, by budget (policy)', ['policy']);
  }

  private limiter(policy: RateLimitPolicy): RateLimiterPostgres {
    let limiter = this.limiters.get(policy.name);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        clearExpiredByTimeout: true,
        keyPrefix: policy.name,
        points: policy.points,
        duration: policy.durationSeconds,
      });
      this.limiters.set(policy.name, limiter);
    }
    return limiter;
  }

  /** Spends one request of a client address's budget (an IPv6 client's whole /64 shares one). */
  consumeByAddress(policy: RateLimitPolicy, address: string): Promise<BudgetState> {
    return this.consume(policy, addressKey(address));
  }

  /** Spends one request of `key`'s budget and answers what is left of it. */
  async consume(policy: RateLimitPolicy, key: string): Promise<BudgetState> {
    let result: RateLimiterRes;
    let exceeded = false;
    try {
      // Keys (addresses, e-mails) are hashed: fixed length, and no personal data in the table.
      result = await this.limiter(policy).consume(sha256Hex(key));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      result = rejection;
      exceeded = true;
    }
    const resetSeconds = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    if (exceeded) {
      this.refusalSeries(policy.name).inc();
      throw new AppError(
        'rate_limited',
        `rate limit exceeded: ${policy.points} ${policy.unit ?? 'requests'} per ${policy.durationSeconds} s; retry in ${resetSeconds} s`,
        undefined,
        { afterSeconds: resetSeconds, budget: { limit: policy.points, windowSeconds: policy.durationSeconds, remaining: 0 } },
      );
    }
    return { limit: policy.points, windowSeconds: policy.durationSeconds, remaining: Math.max(0, result.remainingPoints), resetSeconds };
  }

  // Policy names are constants in the code, so the series stay few.
  private refusalSeries(policy: string): CounterSeries {
    let series = this.refusalsByPolicy.get(policy);
    if (!series) this.refusalsByPolicy.set(policy, (series = this.refusals.series({ policy })));
    return series;
  }
}
