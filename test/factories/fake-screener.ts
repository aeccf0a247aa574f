import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const MINT = 'So11111111111111111111111111111111111111112';
export const OTHER_MINT = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';

/** A DexScreener pair in the public API's format. */
export function pair(overrides: Record<string, unknown> = {}) {
  return {
    chainId: 'solana',
    dexId: 'raydium',
    url: 'https://dexscreener.com/solana/pair1',
    pairAddress: 'Pair1111111111111111111111111111111111111111',
    baseToken: { address: MINT, name: 'Wrapped SOL', symbol: 'SOL' },
    quoteToken: { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', name: 'USD Coin', symbol: 'USDC' },
    priceNative: '1',
    priceUsd: '150.25',
    txns: { m5: { buys: 5, sells: 4 }, h1: { buys: 60, sells: 55 }, h6: { buys: 300, sells: 280 }, h24: { buys: 1200, sells: 1000 } },
    volume: { h24: 2_000_000, h6: 500_000, h1: 90_000, m5: 8_000 },
    priceChange: { m5: 0.1, h1: -0.4, h6: 1.2, h24: 3.5 },
    liquidity: { usd: 1_000_000, base: 3000, quote: 500_000 },
    fdv: 80_000_000,
    marketCap: 70_000_000,
    pairCreatedAt: Date.parse('2024-01-01T00:00:00Z'),
    ...overrides,
  };
}

export type ScreenerMode = 'ok' | 'down' | 'hang';

/** A local HTTP server speaking the DexScreener `/latest/dex/tokens/{address}` format. */
export async function startFakeScreener(pairsByToken: Record<string, unknown[]>) {
  let mode: ScreenerMode = 'ok';
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    if (mode === 'hang') return;
    if (mode === 'down') {
      response.statusCode = 502;
      return response.end('bad gateway');
    }
    const match = /^\/latest\/dex\/tokens\/([^/?]+)$/.exec(request.url ?? '');
    response.setHeader('content-type', 'application/json');
    if (!match) {
      response.statusCode = 404;
      return response.end('{}');
    }
    const pairs = pairsByToken[decodeURIComponent(match[1]!)] ?? null;
    response.end(JSON.stringify({ schemaVersion: '1.0.0', pairs }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setMode: (next: ScreenerMode) => (mode = next),
    get requests() {
      return requests;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
