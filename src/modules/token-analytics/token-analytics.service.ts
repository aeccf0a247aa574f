import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { analyse, assessSafety, type TokenAnalytics, type TokenSafety } from './analytics.js';
import { ScreenerUnavailableError, type ScreenerClient, type ScreenerPair } from './screener.client.js';
import { echo } from '../../platform/echo.js';
import { followsPattern, type PatternRule } from '../../platform/formats.js';

/** A Solana mint address: base58 (no 0, O, I or l), 32 to 44 characters; the REST schema states the same. */
export const MINT: PatternRule = { pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$', description: 'a base58 token mint of 32 to 44 characters' };
/** Screener answers younger than this are served without asking again. */
const FRESH_MS = 60_000;
/** At most this many tokens are cached (the oldest is dropped first). */
const MAX_TOKENS = 1000;
/** A mint the screener knows no pairs for is not asked about again for this long. */
const UNKNOWN_FRESH_MS = 60_000;
/** Mints remembered as unknown at most (the oldest is dropped first). */
export const MAX_UNKNOWN_MINTS = 10_000;

export interface Provenance {
  source: string;
  fetchedAt: Date;
  ageSeconds: number;
  /** The screener could not be reached and this is the last good answer. */
  stale: boolean;
}

interface CacheEntry {
  pairs: ScreenerPair[];
  fetchedAt: Date;
}

/**
 * Token analytics and safety from the DEX screener, with a cache in front: fresh answers are reused
 * for a minute, and when the screener is down the last good answer is served, flagged stale. The
 * screener limits our address for everyone, so a loop of requests must not become a loop of calls:
 * concurrent requests for one mint share one call, and a mint it knows nothing about is remembered
 * as unknown for a minute.
 */
export class TokenAnalyticsService {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly unknown = new Map<string, Date>();
  private readonly asking = new Map<string, Promise<ScreenerPair[]>>();
  private lastError: { at: Date; message: string } | undefined;

  constructor(
    private readonly screener: ScreenerClient,
    private readonly clock: Clock,
    private readonly maxUnknownMints = MAX_UNKNOWN_MINTS,
  ) {}

  async analytics(mint: string): Promise<TokenAnalytics & Provenance> {
    const { pairs, provenance } = await this.pairsOf(mint);
    return { ...analyse(mint, pairs), ...provenance };
  }

  async safety(mint: string): Promise<TokenSafety & Provenance> {
    const { pairs, provenance } = await this.pairsOf(mint);
    return { ...assessSafety(analyse(mint, pairs), this.clock.now()), ...provenance };
  }

  /** Pairs held in the cache (status report). */
  cachedPairCount(): number {
    let total = 0;
    for (const entry of this.cache.values()) total += entry.pairs.length;
    return total;
  }

  health(): { provider: string; lastError: { at: Date; message: string } | undefined } {
    return { provider: this.screener.name, lastError: this.lastError };
  }

  private async pairsOf(mint: string): Promise<{ pairs: ScreenerPair[]; provenance: Provenance }> {
    if (!followsPattern(mint, MINT)) throw AppError.validation({ mint: `must be ${MINT.description}` });
    const now = this.clock.now();
    const cached = this.cache.get(mint);
    const provenance = (entry: CacheEntry, stale: boolean): Provenance => ({
      source: this.screener.name,
      fetchedAt: entry.fetchedAt,
      ageSeconds: Math.max(0, Math.round((now.getTime() - entry.fetchedAt.getTime()) / 1000)),
      stale,
    });
    if (cached && now.getTime() - cached.fetchedAt.getTime() < FRESH_MS) return { pairs: cached.pairs, provenance: provenance(cached, false) };
    const unknownSince = this.unknown.get(mint);
    if (unknownSince && now.getTime() - unknownSince.getTime() < UNKNOWN_FRESH_MS) throw this.noPairs(mint);

    let pairs: ScreenerPair[];
    try {
      pairs = await this.askOnce(mint);
    } catch (error) {
      if (!(error instanceof ScreenerUnavailableError)) throw error;
      this.lastError = { at: now, message: error.message };
      if (cached) return { pairs: cached.pairs, provenance: provenance(cached, true) };
      throw new AppError('upstream_unavailable', `${error.message}, and nothing is cached for this token`);
    }
    this.lastError = undefined;
    const solana = pairs.filter((pair) => pair.chainId === 'solana');
    const relevant = solana.length ? solana : pairs;
    if (relevant.length === 0) {
      this.unknown.delete(mint);
      this.unknown.set(mint, now);
      if (this.unknown.size > this.maxUnknownMints) this.unknown.delete(this.unknown.keys().next().value!);
      throw this.noPairs(mint);
    }
    this.unknown.delete(mint);
    const entry = { pairs: relevant, fetchedAt: now };
    this.cache.delete(mint);
    this.cache.set(mint, entry);
    if (this.cache.size > MAX_TOKENS) this.cache.delete(this.cache.keys().next().value!);
    return { pairs: relevant, provenance: provenance(entry, false) };
  }

  /** One screener call per mint at a time, shared by every request that wants it meanwhile. */
  private askOnce(mint: string): Promise<ScreenerPair[]> {
    let call = this.asking.get(mint);
    if (!call) {
      call = this.screener.pairsOf(mint).finally(() => this.asking.delete(mint));
      this.asking.set(mint, call);
    }
    return call;
  }

  private noPairs(mint: string): AppError {
    return new AppError('not_found', `the screener knows no pairs for ${echo(mint)}`);
  }
}
