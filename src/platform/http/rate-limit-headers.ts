import type { FastifyReply } from 'fastify';
import type { BudgetState } from './rate-limit.js';

/** The IETF RateLimit headers of a budget a request spent (draft-ietf-httpapi-ratelimit-headers). */
export function writeRateLimitHeaders(reply: FastifyReply, budget: BudgetState): void {
  reply.header('RateLimit-Policy', `${budget.limit};w=${budget.windowSeconds}`);
  reply.header('RateLimit-Limit', budget.limit);
  reply.header('RateLimit-Remaining', budget.remaining);
  reply.header('RateLimit-Reset', budget.resetSeconds);
}
