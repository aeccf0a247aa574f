import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { describeFetchFailure } from '../../platform/net/fetch-failure.js';
import type { TokenAnalyticsService } from '../token-analytics/index.js';
import { PairPrice } from './entities/pair-price.entity.js';

/** A token pair the status report prices: a Pyth price id for the aggregator, a mint for the screener. */
export interface TokenPair {
  pair: string;
  pythId: string;
  mint: string | null;
}

/** The configured pairs (Pyth Hermes ids of the public SOL/USD, BTC/USD and ETH/USD feeds). */
export const TOKEN_PAIRS: readonly TokenPair[] = [
  { pair: 'SOL/USDC', pythId: 'ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d', mint: 'So11111111111111111111111111111111111111112' },
  { pair: 'BTC/USD', pythId: 'e62df6c8b4a85fe1a67db44dc12de5db330f7ac66b72dc658afedf0f4a415b43', mint: null },
  { pair: 'ETH/USD', pythId: 'ff61491a931112ddf1bd8147cd1b641375f79f5825126d665480874634fd0ace', mint: null },
];

export type PairSource = 'aggregator' | 'screener' | 'fallback';

export interface PairQuote {
  pair: string;
  price: number;
  source: PairSource;
  observedAt: Date;
}

export interface PairFeedState {
  quotes: PairQuote[];
  /** Pairs the aggregator priced with a publish time under a minute old at the last refresh. */
  aggregatorLive: number;
  lastUpdated: Date | null;
  missing: string[];
  /** Why the aggregator gave nothing at the last refresh (null when it answered). */
  aggregatorError: { at: Date; message: string } | null;
}

/** Which upstream a refresh still in progress is waiting for. */
export type RefreshPhase = 'aggregator' | 'screener' | 'database';

export interface FeedWithin {
  feed: PairFeedState;
  /** Set when the refresh outlasted the wait: how long it has been running and what it waits for. */
  refreshOutstanding: { forMs: number; waitingFor: RefreshPhase } | null;
}

const hermesAnswer = z.object({
  parsed: z.array(z.object({ id: z.string(), price: z.object({ price: z.string(), expo: z.number(), publish_time: z.number() }) })),
});

/** The aggregator answered, but not with prices. */
class AggregatorAnswerError extends Error {}

const LIVE_WITHIN_MS = 60_000;
const REFRESH_EVERY_MS = 30_000;
const TIMEOUT_MS = 5000;

/**
 * Prices of the configured token pairs for the status report, from the market-data aggregator (Pyth
 * Hermes), then the DEX screener, then the last good price in the database, in that order. Refreshed
 * at most every 30 s, on demand.
 */
export class PairPriceService {
  private state: PairFeedState = { quotes: [], aggregatorLive: 0, lastUpdated: null, missing: TOKEN_PAIRS.map((pair) => pair.pair), aggregatorError: null };
  private refreshing: Promise<PairFeedState> | undefined;
  private refreshStartedAt = 0;
  private refreshPhase: RefreshPhase = 'aggregator';

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly aggregatorUrl: string,
    private readonly tokens: TokenAnalyticsService,
    private readonly logger: Logger,
    readonly pairs: readonly TokenPair[] = TOKEN_PAIRS,
  ) {}

  /** The feed as of the last refresh that completed. */
  lastKnown(): PairFeedState {
    return this.state;
  }

  /** The feed, refreshed first when older than 30 s (concurrent callers share one refresh). */
  async current(): Promise<PairFeedState> {
    const age = this.state.lastUpdated ? this.clock.now().getTime() - this.state.lastUpdated.getTime() : Infinity;
    if (age < REFRESH_EVERY_MS) return this.state;
    if (!this.refreshing) {
      this.refreshStartedAt = performance.now();
      this.refreshing = this.refresh().finally(() => (this.refreshing = undefined));
    }
    return this.refreshing;
  }

  /**
   * The feed, refreshed when due, but waiting at most `waitMs` for the refresh: a silent aggregator
   * and then a silent screener would otherwise hold the caller for both their timeouts. Past the wait
   * the last known feed comes back with what the refresh is still waiting for; the refresh goes on.
   */
  async currentWithin(waitMs: number): Promise<FeedWithin> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
    const refreshed = this.current().catch(() => this.state);
    const first = await Promise.race([refreshed, late]).finally(() => clearTimeout(timer));
    if (first !== 'late') return { feed: first, refreshOutstanding: null };
    return { feed: this.state, refreshOutstanding: { forMs: Math.round(performance.now() - this.refreshStartedAt), waitingFor: this.refreshPhase } };
  }

  private async refresh(): Promise<PairFeedState> {
    const now = this.clock.now();
    const quotes = new Map<string, PairQuote>();
    let aggregatorLive = 0;
    this.refreshPhase = 'aggregator';
    const aggregator = await this.fromAggregator();
    for (const quote of aggregator.quotes) {
      quotes.set(quote.pair, quote);
      if (now.getTime() - quote.observedAt.getTime() < LIVE_WITHIN_MS) aggregatorLive++;
    }
    this.refreshPhase = 'screener';
    for (const pair of this.pairs) {
      if (quotes.has(pair.pair) || !pair.mint) continue;
      const analytics = await this.tokens.analytics(pair.mint).catch(() => undefined);
      if (analytics?.priceUsd) quotes.set(pair.pair, { pair: pair.pair, price: analytics.priceUsd, source: 'screener', observedAt: analytics.fetchedAt });
    }
    this.refreshPhase = 'database';
    const em = this.em.fork();
    // In pair order, so that two processes refreshing at once lock the rows in the same order.
    const fresh = [...quotes.values()].sort((a, b) => (a.pair < b.pair ? -1 : a.pair > b.pair ? 1 : 0));
    if (fresh.length) {
      await em.upsertMany(
        PairPrice,
        fresh.map((quote) => ({ pair: quote.pair, price: String(quote.price), source: quote.source, observedAt: quote.observedAt })),
      );
    }
    const unpriced = this.pairs.map((pair) => pair.pair).filter((pair) => !quotes.has(pair));
    if (unpriced.length) {
      const stored = await em.find(PairPrice, { pair: { $in: unpriced } });
      for (const row of stored) quotes.set(row.pair, { pair: row.pair, price: Number(row.price), source: 'fallback', observedAt: row.observedAt });
    }
    this.state = {
      quotes: this.pairs.map((pair) => quotes.get(pair.pair)).filter((quote): quote is PairQuote => quote !== undefined),
      aggregatorLive,
      lastUpdated: now,
      missing: this.pairs.map((pair) => pair.pair).filter((pair) => !quotes.has(pair)),
      aggregatorError: aggregator.error === null ? null : { at: now, message: aggregator.error },
    };
    return this.state;
  }

  private async fromAggregator(): Promise<{ quotes: PairQuote[]; error: string | null }> {
    const ids = this.pairs.map((pair) => `ids[]=${pair.pythId}`).join('&');
    try {
      const response = await fetch(`${this.aggregatorUrl}/v2/updates/price/latest?${ids}&parsed=true&encoding=hex`, {
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { accept: 'application/json' },
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new AggregatorAnswerError(`answered ${response.status}`);
      }
      const parsed = hermesAnswer.safeParse(await response.json().catch(() => undefined));
      if (!parsed.success) throw new AggregatorAnswerError('its answer did not have the expected shape');
      const quotes = parsed.data.parsed.flatMap((entry) => {
        const pair = this.pairs.find((candidate) => candidate.pythId === entry.id.replace(/^0x/, ''));
        const price = Number(entry.price.price) * 10 ** entry.price.expo;
        return pair && Number.isFinite(price) && price > 0
          ? [{ pair: pair.pair, price, source: 'aggregator' as const, observedAt: new Date(entry.price.publish_time * 1000) }]
          : [];
      });
      return { quotes, error: null };
    } catch (error) {
      this.logger.warn({ err: error }, 'the price aggregator is unavailable; trying the screener and the stored prices');
      return { quotes: [], error: `the aggregator: ${error instanceof AggregatorAnswerError ? error.message : describeFetchFailure(error, TIMEOUT_MS)}` };
    }
  }
}
