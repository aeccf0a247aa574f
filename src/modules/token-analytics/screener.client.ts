import { z } from 'zod';
import { describeFetchFailure } from '../../platform/net/fetch-failure.js';

/** The parts of a DexScreener pair the analytics use; everything else in the answer is ignored. */
const txnsSchema = z.object({ buys: z.number().nonnegative(), sells: z.number().nonnegative() }).partial();
export const pairSchema = z.object({
  chainId: z.string(),
  dexId: z.string(),
  url: z.string().optional(),
  pairAddress: z.string(),
  baseToken: z.object({ address: z.string(), name: z.string().optional(), symbol: z.string().optional() }),
  quoteToken: z.object({ address: z.string(), name: z.string().optional(), symbol: z.string().optional() }),
  priceUsd: z.string().nullish(),
  txns: z.object({ m5: txnsSchema, h1: txnsSchema, h6: txnsSchema, h24: txnsSchema }).partial().nullish(),
  volume: z.object({ m5: z.number(), h1: z.number(), h6: z.number(), h24: z.number() }).partial().nullish(),
  priceChange: z.object({ m5: z.number(), h1: z.number(), h6: z.number(), h24: z.number() }).partial().nullish(),
  liquidity: z.object({ usd: z.number().nullish(), base: z.number().nullish(), quote: z.number().nullish() }).nullish(),
  fdv: z.number().nullish(),
  marketCap: z.number().nullish(),
  pairCreatedAt: z.number().nullish(),
});
export type ScreenerPair = z.infer<typeof pairSchema>;

const tokensAnswer = z.object({ pairs: z.array(pairSchema).nullable() });

export class ScreenerUnavailableError extends Error {
  constructor(reason: string) {
    super(`the DEX screener is unavailable: ${reason}`);
  }
}

/**
 * A client of the public DexScreener API (`GET /latest/dex/tokens/{address}`): a timeout on every
 * call, the answer checked against the fields we read, and failures reported as one error type.
 */
export class ScreenerClient {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 5000,
  ) {}

  get name(): string {
    return 'dexscreener';
  }

  async pairsOf(tokenAddress: string): Promise<ScreenerPair[]> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/latest/dex/tokens/${encodeURIComponent(tokenAddress)}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new ScreenerUnavailableError(describeFetchFailure(error, this.timeoutMs));
    }
    if (response.status >= 500 || response.status === 429) throw new ScreenerUnavailableError(`it answered ${response.status}`);
    if (!response.ok) return [];
    const parsed = tokensAnswer.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new ScreenerUnavailableError('its answer did not have the expected shape');
    return parsed.data.pairs ?? [];
  }
}
