import type { FastifyReply } from 'fastify';
import type { PresentedCredential } from '../../platform/auth/credentials.js';
import type { RateLimitPolicy, RateLimits } from '../../platform/http/rate-limit.js';
import type { AccountService } from './account.service.js';

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
  /** The caller of a request, read once however many directory fields (aliases) it resolves. */
  private readonly subjects = new WeakMap<PresentedCredential, Promise<string | undefined>>();

  constructor(
    private readonly rateLimits: RateLimits,
    private readonly accounts: AccountService,
    limits: DirectoryLimits,
  ) {
    this.anonymous = { name: 'directory-ip', points: limits.anonymousPerMinute, durationSeconds: 60 };
    this.signedIn = { name: 'directory-user', points: limits.signedInPerMinute, durationSeconds: 60 };
  }

  /** Spends one unit, or fails with 429 `rate_limited`; `reply` (REST) also gets the RateLimit-* headers. */
  async spend(credential: PresentedCredential, address: string, reply?: FastifyReply): Promise<void> {
    const subject = await this.subjectOf(credential);
    if (subject) await this.rateLimits.consume(this.signedIn, subject, reply);
    else await this.rateLimits.consumeByAddress(this.anonymous, address, reply);
  }

  private subjectOf(credential: PresentedCredential): Promise<string | undefined> {
    let subject = this.subjects.get(credential);
    if (!subject) this.subjects.set(credential, (subject = this.accounts.sessionSubject(credential)));
    return subject;
  }
}
