import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestClock } from '../../factories/clock.js';
import { MINT, OTHER_MINT, pair, startFakeScreener } from '../../factories/fake-screener.js';
import { startTestApp, type TestApp } from '../../harness.js';

describe('token analytics and safety against a screener speaking the DexScreener format', () => {
  let t: TestApp;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  const clock = new TestClock(new Date('2025-01-10T00:00:00Z'));
  const FRESH_TOKEN = 'Fresh1111111111111111111111111111111111111';
  const BUSY_TOKEN = 'Busy11111111111111111111111111111111111111';
  const SECOND_PAIR = pair({ dexId: 'orca', pairAddress: 'Pair2222222222222222222222222222222222222222', liquidity: { usd: 250_000 }, volume: { h24: 500_000 }, txns: { h24: { buys: 300, sells: 200 } } });

  beforeAll(async () => {
    screener = await startFakeScreener({
      [MINT]: [pair(), SECOND_PAIR, pair({ chainId: 'ethereum', pairAddress: '0xabc', liquidity: { usd: 9_000_000 } })],
      [OTHER_MINT]: [pair({ baseToken: { address: OTHER_MINT, name: 'Other', symbol: 'OTH' } })],
      [BUSY_TOKEN]: [pair({ baseToken: { address: BUSY_TOKEN, name: 'Busy', symbol: 'BSY' } })],
      [FRESH_TOKEN]: [
        pair({
          baseToken: { address: FRESH_TOKEN, name: 'Fresh', symbol: 'FRSH' },
          liquidity: { usd: 8_000 },
          volume: { h24: 400_000 },
          txns: { h24: { buys: 950, sells: 50 } },
          fdv: 90_000_000,
          pairCreatedAt: Date.parse('2025-01-09T12:00:00Z'),
        }),
      ],
    });
    t = await startTestApp({ jobs: false, clock, env: { SCREENER_URL: screener.url } });
  });
  afterAll(async () => {
    await t.close();
    await screener.close();
  });

  const get = (path: string) => t.rest({ method: 'GET', url: path });

  it('sums the Solana pairs and reads price and changes from the main pair', async () => {
    const response = await get(`/v1/tokens/${MINT}/analytics`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      mint: MINT,
      token: { name: 'Wrapped SOL', symbol: 'SOL' },
      price_usd: 150.25,
      liquidity_usd: 1_250_000,
      volume_24h_usd: 2_500_000,
      txns_24h: { buys: 1500, sells: 1200 },
      price_change_pct: { m5: 0.1, h1: -0.4, h6: 1.2, h24: 3.5 },
      fdv_usd: 80_000_000,
      market_cap_usd: 70_000_000,
      main_pair: {
        address: 'Pair1111111111111111111111111111111111111111',
        dex: 'raydium',
        quote_symbol: 'USDC',
        liquidity_usd: 1_000_000,
        url: 'https://dexscreener.com/solana/pair1',
        created_at: '2024-01-01T00:00:00.000Z',
      },
      pair_count: 2,
      source: 'dexscreener',
      fetched_at: '2025-01-10T00:00:00.000Z',
      age_seconds: 0,
      stale: false,
    });
  });

  it('scores safety with named, weighted checks', async () => {
    const safe = (await get(`/v1/tokens/${MINT}/safety`)).json();
    expect(safe).toMatchObject({ mint: MINT, score: 100, rating: 'low_risk', missing_inputs: [] });
    expect(safe.checks.map((check: { name: string }) => check.name)).toEqual([
      'liquidity_depth',
      'pair_age',
      'buy_sell_imbalance',
      'volume_liquidity_anomaly',
      'fdv_liquidity',
      'pair_concentration',
    ]);
    expect(safe.checks[0]).toEqual({ name: 'liquidity_depth', description: expect.any(String), weight: 25, threshold: '>= 50000', value: 1_250_000, passed: true });

    const risky = (await get(`/v1/tokens/${FRESH_TOKEN}/safety`)).json();
    const failed = risky.checks.filter((check: { passed: boolean }) => !check.passed).map((check: { name: string }) => check.name);
    expect(failed).toEqual(['liquidity_depth', 'pair_age', 'buy_sell_imbalance', 'volume_liquidity_anomaly', 'fdv_liquidity', 'pair_concentration']);
    expect(risky).toMatchObject({ score: 0, rating: 'high_risk' });
  });

  it('answers 400 for a mint that is not base58 of 32 to 44 characters, 404 when the screener knows no pairs', async () => {
    for (const mint of ['short', '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', 'x'.repeat(45)]) {
      const response = await get(`/v1/tokens/${mint}/analytics`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error: 'validation', message: expect.stringMatching(/base58/) });
    }
    const unknown = await get('/v1/tokens/Unknown111111111111111111111111111111111111/safety');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('asks the screener once for many concurrent requests of one mint, and once a minute about a mint it does not know', async () => {
    const UNKNOWN = 'Unknown2222222222222222222222222222222222';
    const before = screener.requests;
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(`/v1/tokens/${BUSY_TOKEN}/analytics`)));
    expect(answers.every((answer) => answer.statusCode === 200)).toBe(true);
    expect(screener.requests - before).toBe(1);

    const unknownBefore = screener.requests;
    for (let i = 0; i < 10; i++) expect((await get(`/v1/tokens/${UNKNOWN}/analytics`)).statusCode).toBe(404);
    expect(screener.requests - unknownBefore).toBe(1);
    const now = clock.now();
    clock.set(new Date(now.getTime() + 61_000));
    try {
      expect((await get(`/v1/tokens/${UNKNOWN}/safety`)).statusCode).toBe(404);
      expect(screener.requests - unknownBefore).toBe(2);
    } finally {
      clock.set(now);
    }
  });

  it('serves the cache while fresh, a stale copy when the screener is down, and 503 with nothing cached', async () => {
    const before = screener.requests;
    await get(`/v1/tokens/${OTHER_MINT}/analytics`);
    await get(`/v1/tokens/${OTHER_MINT}/safety`);
    expect(screener.requests - before).toBe(1);

    clock.set('2025-01-10T00:05:00Z');
    screener.setMode('down');
    try {
      const stale = await get(`/v1/tokens/${OTHER_MINT}/analytics`);
      expect(stale.statusCode).toBe(200);
      expect(stale.json()).toMatchObject({ stale: true, age_seconds: 300, fetched_at: '2025-01-10T00:00:00.000Z' });
      const nothing = await get('/v1/tokens/Nothing1111111111111111111111111111111111111/analytics');
      expect(nothing.statusCode).toBe(503);
      expect(nothing.json()).toEqual({ error: 'upstream_unavailable', message: expect.any(String) });
    } finally {
      screener.setMode('ok');
    }
  });

  it('gives up on a screener that does not answer within 5 s', async () => {
    screener.setMode('hang');
    try {
      const started = Date.now();
      const response = await get('/v1/tokens/Hanging111111111111111111111111111111111111/analytics');
      expect(response.statusCode).toBe(503);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    } finally {
      screener.setMode('ok');
    }
  }, 15_000);
});
