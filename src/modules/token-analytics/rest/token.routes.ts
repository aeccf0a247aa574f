import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { writeRateLimitHeaders } from '../../../platform/http/rate-limit-headers.js';
import type { TokenAnalyticsService } from '../token-analytics.service.js';
import type { TokenReadBudget } from '../token-read-budget.js';
import { presentAnalytics, presentSafety } from '../token.view.js';
import { analyticsRoute, safetyRoute } from './token.schemas.js';

export function registerTokenRoutes(app: FastifyInstance, tokens: TokenAnalyticsService, budget: TokenReadBudget): void {
  const config = { errorStyle: 'plain' as const };
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => writeRateLimitHeaders(reply, await budget.spend(request.ip));
  app.get<{ Params: { mint: string } }>(
    '/v1/tokens/:mint/analytics',
    { schema: analyticsRoute, config, onRequest },
    async (request) => presentAnalytics(await tokens.analytics(request.params.mint)),
  );
  app.get<{ Params: { mint: string } }>(
    '/v1/tokens/:mint/safety',
    { schema: safetyRoute, config, onRequest },
    async (request) => presentSafety(await tokens.safety(request.params.mint)),
  );
}
