import type { ScreenerPair } from './screener.client.js';

/** Pure: the numbers of a token from its DEX pairs. The main pair is the one with the most liquidity. */
export interface TokenAnalytics {
  mint: string;
  token: { name: string | null; symbol: string | null };
  priceUsd: number | null;
  liquidityUsd: number;
  volume24hUsd: number;
  txns24h: { buys: number; sells: number };
  priceChangePct: { m5: number | null; h1: number | null; h6: number | null; h24: number | null };
  fdvUsd: number | null;
  marketCapUsd: number | null;
  mainPair: { address: string; dex: string; quoteSymbol: string | null; liquidityUsd: number; url: string | null; createdAt: Date | null } | null;
  pairCount: number;
}

const num = (value: number | null | undefined) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export function analyse(mint: string, pairs: readonly ScreenerPair[]): TokenAnalytics {
  const liquidityOf = (pair: ScreenerPair) => num(pair.liquidity?.usd) ?? 0;
  const main = [...pairs].sort((a, b) => liquidityOf(b) - liquidityOf(a))[0];
  const sum = (pick: (pair: ScreenerPair) => number | null | undefined) => pairs.reduce((total, pair) => total + (num(pick(pair)) ?? 0), 0);
  const token = main?.baseToken.address === mint ? main.baseToken : main?.quoteToken.address === mint ? main.quoteToken : main?.baseToken;
  return {
    mint,
    token: { name: token?.name ?? null, symbol: token?.symbol ?? null },
    priceUsd: main?.priceUsd ? num(Number(main.priceUsd)) : null,
    liquidityUsd: sum((pair) => pair.liquidity?.usd),
    volume24hUsd: sum((pair) => pair.volume?.h24),
    txns24h: { buys: sum((pair) => pair.txns?.h24?.buys), sells: sum((pair) => pair.txns?.h24?.sells) },
    priceChangePct: {
      m5: num(main?.priceChange?.m5),
      h1: num(main?.priceChange?.h1),
      h6: num(main?.priceChange?.h6),
      h24: num(main?.priceChange?.h24),
    },
    fdvUsd: num(main?.fdv),
    marketCapUsd: num(main?.marketCap),
    mainPair: main
      ? {
          address: main.pairAddress,
          dex: main.dexId,
          quoteSymbol: main.quoteToken.symbol ?? null,
          liquidityUsd: liquidityOf(main),
          url: main.url ?? null,
          createdAt: main.pairCreatedAt ? new Date(main.pairCreatedAt) : null,
        }
      : null,
    pairCount: pairs.length,
  };
}

export interface SafetyCheck {
  name: string;
  description: string;
  weight: number;
  threshold: string;
  value: number | null;
  /** null when the input was missing: the check does not count either way. */
  passed: boolean | null;
}

export interface TokenSafety {
  mint: string;
  /** 0–100: the share of the weight of the checks that could be made and passed. */
  score: number;
  rating: 'low_risk' | 'medium_risk' | 'high_risk';
  checks: SafetyCheck[];
  missingInputs: string[];
}

const DAY_MS = 86_400_000;

/** Pure: a 0–100 safety score from named, weighted checks over the analytics. */
export function assessSafety(analytics: TokenAnalytics, now: Date): TokenSafety {
  const { liquidityUsd, volume24hUsd, txns24h, fdvUsd, mainPair } = analytics;
  const trades = txns24h.buys + txns24h.sells;
  const ageDays = mainPair?.createdAt ? (now.getTime() - mainPair.createdAt.getTime()) / DAY_MS : null;
  const buyShare = trades > 0 ? txns24h.buys / trades : null;
  const volumeRatio = liquidityUsd > 0 ? volume24hUsd / liquidityUsd : null;
  const fdvRatio = fdvUsd !== null && liquidityUsd > 0 ? fdvUsd / liquidityUsd : null;
  const mainShare = mainPair && liquidityUsd > 0 ? mainPair.liquidityUsd / liquidityUsd : null;
  const round = (value: number | null, digits = 2) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);

  const checks: SafetyCheck[] = [
    { name: 'liquidity_depth', description: 'Total USD liquidity across pairs', weight: 25, threshold: '>= 50000', value: round(liquidityUsd), passed: liquidityUsd >= 50_000 },
    { name: 'pair_age', description: 'Age of the main pair in days', weight: 15, threshold: '>= 7', value: round(ageDays, 1), passed: ageDays === null ? null : ageDays >= 7 },
    { name: 'buy_sell_imbalance', description: 'Share of buys among 24 h trades', weight: 15, threshold: 'between 0.2 and 0.8', value: round(buyShare), passed: buyShare === null ? null : buyShare >= 0.2 && buyShare <= 0.8 },
    { name: 'volume_liquidity_anomaly', description: '24 h volume divided by liquidity', weight: 15, threshold: '<= 10', value: round(volumeRatio), passed: volumeRatio === null ? null : volumeRatio <= 10 },
    { name: 'fdv_liquidity', description: 'Fully diluted valuation divided by liquidity', weight: 15, threshold: '<= 100', value: round(fdvRatio), passed: fdvRatio === null ? null : fdvRatio <= 100 },
    { name: 'pair_concentration', description: 'Share of liquidity in the main pair', weight: 15, threshold: '<= 0.9, or a single pair holding >= 250000', value: round(mainShare), passed: mainShare === null ? null : mainShare <= 0.9 || liquidityUsd >= 250_000 },
  ];
  const missingInputs = [
    ...(ageDays === null ? ['pairCreatedAt'] : []),
    ...(trades === 0 ? ['txns.h24'] : []),
    ...(fdvUsd === null ? ['fdv'] : []),
    ...(liquidityUsd === 0 ? ['liquidity.usd'] : []),
  ];
  const counted = checks.filter((check) => check.passed !== null);
  const weight = counted.reduce((total, check) => total + check.weight, 0);
  const earned = counted.filter((check) => check.passed).reduce((total, check) => total + check.weight, 0);
  const score = weight === 0 ? 0 : Math.round((earned / weight) * 100);
  return { mint: analytics.mint, score, rating: score >= 70 ? 'low_risk' : score >= 40 ? 'medium_risk' : 'high_risk', checks, missingInputs };
}
