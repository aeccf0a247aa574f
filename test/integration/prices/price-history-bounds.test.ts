import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PRICE_HISTORY_LIMITS } from '../../../src/modules/prices/price.service.js';
import { GpuPriceHistoryWindowDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../harness.js';

/** Snapshots of h100 at aws only, one a minute from `start`, written straight into the tables. */
async function insertSnapshots(t: TestApp, start: Date, count: number): Promise<void> {
  await t.query(
    `with snapshots as (
       insert into price_snapshots (taken_at, source, created_at)
       select $1::timestamptz + i * interval '1 minute', 'admin', now() from generate_series(0, $2::int - 1) as i
       returning id
     )
     insert into price_rows (snapshot_id, gpu_slug, provider, spot_price_usd, on_demand_price_usd)
     select id, 'h100', 'aws', 1.5, 3.0 from snapshots`,
    [start, count],
  );
}

describe('gpuPriceHistory', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
  });
  afterAll(() => t.close());

  it(`answers a window of ${PRICE_HISTORY_LIMITS.maxRows} rows and refuses one more, naming from`, async () => {
    const start = new Date('2029-01-01T00:00:00Z');
    await insertSnapshots(t, start, PRICE_HISTORY_LIMITS.maxRows);
    const window = { gpu: 'h100', provider: 'aws', from: start.toISOString(), to: '2029-12-31T00:00:00Z' };

    const atBound = await t.gql(GpuPriceHistoryWindowDocument, window);
    expect(atBound.errors).toBeUndefined();
    expect(atBound.data!.gpuPriceHistory).toHaveLength(PRICE_HISTORY_LIMITS.maxRows);
    expect(atBound.data!.gpuPriceHistory[0]!.lastSeen).toBe(start.toISOString());

    await insertSnapshots(t, new Date('2029-06-01T00:00:00Z'), 1);
    const overBound = await t.gql(GpuPriceHistoryWindowDocument, window);
    expect(overBound.data).toBeNull();
    expect(overBound.errors?.[0]?.extensions).toEqual({
      code: 'validation',
      errors: { from: expect.stringContaining(`more than ${PRICE_HISTORY_LIMITS.maxRows} rows`) },
    });
    // A narrower window over the same rows is answered.
    const narrower = await t.gql(GpuPriceHistoryWindowDocument, { ...window, to: '2029-05-01T00:00:00Z' });
    expect(narrower.data!.gpuPriceHistory).toHaveLength(PRICE_HISTORY_LIMITS.maxRows);
  });
});
