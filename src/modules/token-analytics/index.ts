/**
 * Token analytics (seed 002): numbers and a safety score for a token mint, from the DEX screener.
 *
 * Glossary
 * - pair: a DEX market of the token against another; the main pair holds the most liquidity.
 * - stale: the screener is down and the answer is the last good one from the cache.
 */
import type { FastifyInstance } from 'fastify';
import type { RateLimits } from '../../platform/http/rate-limit.js';
import { TokenReadBudget } from './token-read-budget.js';
import { tokenTools } from './mcp/token.tools.js';
import type { Clock } from '../../platform/clock.js';
import { ScreenerClient } from './screener.client.js';
import { TokenAnalyticsService } from './token-analytics.service.js';
import { registerTokenRoutes } from './rest/token.routes.js';

export { TokenAnalyticsService } from './token-analytics.service.js';
export { TokenReadBudget } from './token-read-budget.js';
export { presentAnalytics, presentSafety } from './token.view.js';

export function createTokenAnalyticsModule(deps: { screenerUrl: string; clock: Clock; rateLimits: RateLimits; readsPerMinute: number }) {
  const tokens = new TokenAnalyticsService(new ScreenerClient(deps.screenerUrl), deps.clock);
  const budget = new TokenReadBudget(deps.rateLimits, deps.readsPerMinute);
  return { tokens, budget, mcpTools: tokenTools(tokens, budget), registerRoutes: (app: FastifyInstance) => registerTokenRoutes(app, tokens, budget) };
}
