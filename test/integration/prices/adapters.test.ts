import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AwsAdapter } from '../../../src/modules/prices/adapters/aws.adapter.js';
import { AzureAdapter } from '../../../src/modules/prices/adapters/azure.adapter.js';
import { RunpodAdapter } from '../../../src/modules/prices/adapters/runpod.adapter.js';
import { VastAdapter } from '../../../src/modules/prices/adapters/vast.adapter.js';
import { startPriceSources } from '../../factories/price-sources.js';
import { startTestApp, type TestApp } from '../../harness.js';

const bySlug = (rows: { slug: string }[]) => Object.fromEntries(rows.map((row) => [row.slug, row]));
const signal = () => AbortSignal.timeout(5000);

describe('GPU price adapters against recorded responses', () => {
  let sources: Awaited<ReturnType<typeof startPriceSources>>;
  beforeAll(async () => {
    sources = await startPriceSources();
  });
  afterAll(() => sources.close());

  it('reads Azure Retail Prices: Linux pay-as-you-go and Spot per GPU, across pages, no Windows or Low Priority', async () => {
    const rows = bySlug(await new AzureAdapter(sources.base).fetchRows(signal()));
    expect(rows).toEqual({
      h100: { slug: 'h100', spotPriceUsd: 3.6, onDemandPriceUsd: 12.29 },
      a100: { slug: 'a100', spotPriceUsd: null, onDemandPriceUsd: 3.673 },
      t4: { slug: 't4', spotPriceUsd: 0.1578, onDemandPriceUsd: 0.526 },
    });
  });

  it('reads the AWS spot.js JSONP and the on-demand map of one region', async () => {
    const rows = bySlug(await new AwsAdapter(`${sources.base}/spot.js`, `${sources.base}/ondemand.json`).fetchRows(signal()));
    expect(rows).toEqual({
      h100: { slug: 'h100', spotPriceUsd: 3.006, onDemandPriceUsd: 6.88 },
      a10g: { slug: 'a10g', spotPriceUsd: 0.4234, onDemandPriceUsd: 1.006 },
      t4: { slug: 't4', spotPriceUsd: 0.2271, onDemandPriceUsd: 0.526 },
      v100: { slug: 'v100', spotPriceUsd: null, onDemandPriceUsd: 3.06 },
    });
  });

  it('reads RunPod gpuTypes: the cheapest cloud per GPU, 80 GB A100 only', async () => {
    const rows = bySlug(await new RunpodAdapter(sources.base).fetchRows(signal()));
    expect(rows).toEqual({
      h100: { slug: 'h100', spotPriceUsd: 1.69, onDemandPriceUsd: 1.99 },
      a100: { slug: 'a100', spotPriceUsd: 0.82, onDemandPriceUsd: 1.19 },
      'rtx-4090': { slug: 'rtx-4090', spotPriceUsd: 0.2, onDemandPriceUsd: 0.34 },
    });
  });

  it('reads Vast offers: cheapest per GPU on demand and lowest bid, 80 GB A100 only', async () => {
    const rows = bySlug(await new VastAdapter(sources.base).fetchRows(signal()));
    expect(rows).toEqual({
      h100: { slug: 'h100', spotPriceUsd: 1.45, onDemandPriceUsd: 1.9 },
      a100: { slug: 'a100', spotPriceUsd: 0.65, onDemandPriceUsd: 0.85 },
      'rtx-4090': { slug: 'rtx-4090', spotPriceUsd: 0.22, onDemandPriceUsd: 0.35 },
      v100: { slug: 'v100', spotPriceUsd: null, onDemandPriceUsd: 0.26 },
    });
  });

  it('fails loudly on an outage or an answer of the wrong shape', async () => {
    sources.fail('/graphql');
    await expect(new RunpodAdapter(sources.base).fetchRows(signal())).rejects.toThrow(/500/);
    sources.recover('/graphql');
    await expect(new VastAdapter(`${sources.base}/spot.js?`).fetchRows(signal())).rejects.toThrow();
  });
});

describe('the 30-minute refresh job', () => {
  let t: TestApp;
  let sources: Awaited<ReturnType<typeof startPriceSources>>;

  beforeAll(async () => {
    sources = await startPriceSources();
    t = await startTestApp({
      env: { PRICE_PROVIDERS: 'azure,runpod,vast' },
      priceAdapters: [new AzureAdapter(sources.base), new RunpodAdapter(sources.base), new VastAdapter(sources.base)],
    });
  });
  afterAll(async () => {
    await t.close();
    await sources.close();
  });

  it('adds a snapshot per source that answers and keeps the last good rows of one that fails', async () => {
    sources.fail('/api/v0/bundles/');
    await t.query(`select graphile_worker.add_job('refresh_gpu_prices')`);
    let status: { services: { gpu_prices: { sources: { provider: string; status: string; last_error: string | null }[] } } } | undefined;
    for (let i = 0; i < 100; i++) {
      status = (await t.rest({ method: 'GET', url: '/api/status' })).json();
      if (status!.services.gpu_prices.sources.length === 3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status!.services.gpu_prices.sources).toEqual([
      { provider: 'azure', status: 'operational', last_success: expect.any(String), last_error: null },
      { provider: 'runpod', status: 'operational', last_success: expect.any(String), last_error: null },
      { provider: 'vast', status: 'down', last_success: null, last_error: expect.stringMatching(/500/) },
    ]);
    const h100 = Object.fromEntries(
      (await t.rest({ method: 'GET', url: '/api/v1/prices/h100' })).json().prices.map((row: { provider: string }) => [row.provider, row]),
    );
    expect(h100.azure).toMatchObject({ on_demand_price_usd: 12.29, spot_price_usd: 3.6 });
    expect(h100.runpod).toMatchObject({ on_demand_price_usd: 1.99, spot_price_usd: 1.69 });
    // Vast failed: its reference row stays.
    expect(h100.vast).toMatchObject({ on_demand_price_usd: 1.87, last_seen: '2025-06-01T00:00:00.000Z' });
    const sourcesOfSnapshots = await t.query<{ source: string }>('select source from price_snapshots order by id');
    expect(sourcesOfSnapshots.map((row) => row.source).sort()).toEqual(['azure', 'reference', 'runpod']);
  });
});
