import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScreenerClient } from '../../../src/modules/token-analytics/screener.client.js';
import { TokenAnalyticsService } from '../../../src/modules/token-analytics/token-analytics.service.js';
import { TestClock } from '../../factories/clock.js';
import { startFakeScreener } from '../../factories/fake-screener.js';

describe('the memory of mints the screener does not know', () => {
  const LIMIT = 3;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  let tokens: TokenAnalyticsService;
  // Base58 mints of 32+ characters the fake screener knows nothing about.
  const mint = (n: number) => `Unknown${n}${'2'.repeat(32)}`;
  const ask = (n: number) => tokens.analytics(mint(n)).catch((error: unknown) => error);

  beforeAll(async () => {
    screener = await startFakeScreener({});
    // The real service against a real (local) screener, with the bound made small enough to reach.
    tokens = new TokenAnalyticsService(new ScreenerClient(screener.url), new TestClock(new Date('2025-01-10T00:00:00Z')), LIMIT);
  });
  afterAll(async () => {
    await screener.close();
  });

  it(`remembers ${LIMIT} unknown mints and forgets the oldest for the next one`, async () => {
    for (let n = 1; n <= LIMIT; n++) await ask(n);
    const afterFilling = screener.requests;
    for (let n = 1; n <= LIMIT; n++) expect(await ask(n)).toMatchObject({ code: 'not_found' });
    expect(screener.requests).toBe(afterFilling); // all three answered from memory

    await ask(LIMIT + 1); // one more than the bound: the oldest (1) is forgotten
    const afterOverflow = screener.requests;
    await ask(2);
    expect(screener.requests).toBe(afterOverflow);
    await ask(1);
    expect(screener.requests).toBe(afterOverflow + 1);
  });
});
