import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TokenAnalytics, TokenSafety } from './analytics.js';
import type { Provenance, TokenAnalyticsService } from './token-analytics.service.js';
import type { TokenReadBudget } from './token-read-budget.js';

const provenance = (value: Provenance) => ({
  source: value.source,
  fetched_at: value.fetchedAt.toISOString(),
  age_seconds: value.ageSeconds,
  stale: value.stale,
});

/** The analytics answer (REST and MCP alike). */
export function presentAnalytics(value: TokenAnalytics & Provenance) {
  return {
    mint: value.mint,
    token: value.token,
    price_usd: value.priceUsd,
    liquidity_usd: value.liquidityUsd,
    volume_24h_usd: value.volume24hUsd,
    txns_24h: value.txns24h,
    price_change_pct: value.priceChangePct,
    fdv_usd: value.fdvUsd,
    market_cap_usd: value.marketCapUsd,
    main_pair: value.mainPair && {
      address: value.mainPair.address,
      dex: value.mainPair.dex,
      quote_symbol: value.mainPair.quoteSymbol,
      liquidity_usd: value.mainPair.liquidityUsd,
      url: value.mainPair.url,
      created_at: value.mainPair.createdAt?.toISOString() ?? null,
    },
    pair_count: value.pairCount,
    ...provenance(value),
  };
}

/** The safety answer (REST and MCP alike). */
export function presentSafety(value: TokenSafety & Provenance) {
  return {
    mint: value.mint,
    score: value.score,
    rating: value.rating,
    checks: value.checks,
    missing_inputs: value.missingInputs,
    ...provenance(value),
  };
}

const mintParams = { type: 'object', required: ['mint'], properties: { mint: { type: 'string' } } } as const;
const errors = {
  429: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } },
  400: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } },
  404: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } },
  503: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } },
};

export function registerTokenRoutes(app: FastifyInstance, tokens: TokenAnalyticsService, budget: TokenReadBudget): void {
  const config = { errorStyle: 'plain' as const };
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => budget.spend(request.ip, reply);
  app.get<{ Params: { mint: string } }>(
    '/v1/tokens/:mint/analytics',
    { schema: { summary: 'Price, liquidity, volume and trades of a token from its DEX pairs', tags: ['tokens'], params: mintParams, response: errors }, config, onRequest },
    async (request) => presentAnalytics(await tokens.analytics(request.params.mint)),
  );
  app.get<{ Params: { mint: string } }>(
    '/v1/tokens/:mint/safety',
    { schema: { summary: 'A 0–100 safety score with named, weighted checks', tags: ['tokens'], params: mintParams, response: errors }, config, onRequest },
    async (request) => presentSafety(await tokens.safety(request.params.mint)),
  );
}
