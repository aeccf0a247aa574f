/**
 * The token answers as the REST routes and the MCP tools give them (snake_case, ISO dates): one shape
 * for both adapters, so it lives in the module rather than in either adapter.
 */
import type { TokenAnalytics, TokenSafety } from './analytics.js';
import type { Provenance } from './token-analytics.service.js';

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
