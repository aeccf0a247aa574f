import type { Actor } from '../../platform/auth/actor.js';
import type { BudgetState, RateLimitPolicy, RateLimits } from '../../platform/http/rate-limit.js';
import { viewerOf } from './account.service.js';

export interface DirectoryLimits {
  anonymousPerMinute: number;
  signedInPerMinute: number;
}

/**
 * The directory's request budget, one rule for every way in: a signed-in user spends their own
 * (larger) budget, everyone else shares their address's. REST spends one unit per request; GraphQL
 * one per directory field it resolves, alias by alias, so a document cannot buy many reads for one.
 */
export class DirectoryBudget {
  private readonly anonymous: RateLimitPolicy;
  private readonly signedIn: RateLimitPolicy;

  constructor(
    private readonly rateLimits: RateLimits,
    limits: DirectoryLimits,
  ) {
    this.anonymous = { name: 'directory-ip', points: limits.anonymousPerMinute, durationSeconds: 60 };
    this.signedIn = { name: 'directory-user', points: limits.signedInPerMinute, durationSeconds: 60 };
  }

  /** Spends one unit and answers what is left, or fails with 429 `rate_limited`. */
  async spend(actor: Actor, address: string): Promise<BudgetState> {
    const account = viewerOf(actor);
    return account ? this.rateLimits.consume(this.signedIn, account.id) : this.rateLimits.consumeByAddress(this.anonymous, address);
  }
}
