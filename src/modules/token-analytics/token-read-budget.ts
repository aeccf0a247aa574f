import type { BudgetState, RateLimitPolicy, RateLimits } from '../../platform/http/rate-limit.js';

/**
 * Token reads per client address and minute, one rule for REST and MCP. Every read may cost a call to
 * the screener, which limits our address for everyone; the address, not a credential, is the key:
 * token routes need none, and any string would otherwise buy a fresh budget.
 */
export class TokenReadBudget {
  private readonly policy: RateLimitPolicy;

  constructor(
    private readonly rateLimits: RateLimits,
    perMinute: number,
  ) {
    this.policy = { name: 'token-reads', points: perMinute, durationSeconds: 60 };
  }

  /** Spends one read and answers what is left, or fails with 429 `rate_limited`. */
  spend(address: string): Promise<BudgetState> {
    return this.rateLimits.consumeByAddress(this.policy, address);
  }
}
