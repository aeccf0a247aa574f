import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { TestClock } from '../../factories/clock.js';
import { CheapestGpuDocument, GpuPriceHistoryDocument, GpuPricesDocument, PriceSnapshotAddedDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

describe('GPU price feed', () => {
  let a: TestApp;
  let b: TestApp;
  const clock = new TestClock(new Date('2030-01-01T12:00:00Z'));

  beforeAll(async () => {
    a = await startTestApp({ jobs: false, clock, env: { ADMIN_TOKEN } });
    // A second process on the same database, without ADMIN_TOKEN.
    b = await startTestApp({ jobs: false, clock, databaseUrl: a.databaseUrl });
  });
  afterAll(async () => {
    await b.app.close();
    await b.orm.close(true);
    await a.close();
  });

  const ingest = (body: object, token = ADMIN_TOKEN, app = a) =>
    app.rest({ method: 'POST', url: '/api/v1/prices/snapshots', headers: bearer(token), payload: body });

  it('serves the bundled reference snapshot on a fresh install, CORS-enabled', async () => {
    const response = await b.rest({ method: 'GET', url: '/api/v1/prices', headers: { origin: 'https://elsewhere.example' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const body = response.json();
    expect(body.updated_at).toBe('2025-06-01T00:00:00.000Z');
    expect(body.refresh_interval_minutes).toBe(30);
    expect(body.prices.length).toBeGreaterThan(30);
    const h100aws = body.prices.find((row: { slug: string; provider: string }) => row.slug === 'h100' && row.provider === 'aws');
    expect(h100aws).toEqual({
      gpu: 'NVIDIA H100 80GB',
      slug: 'h100',
      provider: 'aws',
      spot_price_usd: 2.5,
      on_demand_price_usd: 6.88,
      savings_pct: 63.7,
      last_seen: '2025-06-01T00:00:00.000Z',
    });
    const noSpot = body.prices.find((row: { spot_price_usd: number | null }) => row.spot_price_usd === null);
    expect(noSpot.savings_pct).toBeNull();
    const [{ n }] = (await a.query<{ n: string }>('select count(*) as n from price_snapshots')) as [{ n: string }];
    expect(Number(n)).toBe(1);
  });

  it('answers CORS preflight and serves one GPU, 404 for an unknown slug', async () => {
    const preflight = await a.rest({
      method: 'OPTIONS',
      url: '/api/v1/prices/h100',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const one = (await a.rest({ method: 'GET', url: '/api/v1/prices/h100' })).json();
    expect(one.gpu).toBe('h100');
    expect(one.prices.map((row: { provider: string }) => row.provider)).toEqual(['aws', 'azure', 'gcp', 'lambda', 'oci', 'runpod', 'vast']);
    const unknown = await a.rest({ method: 'GET', url: '/api/v1/prices/b200' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(unknown.headers['access-control-allow-origin']).toBe('*');
  });

  it('opens CORS for reads of the feed only: no preflight for the admin ingest or any other path', async () => {
    const preflight = (url: string, method: string) =>
      a.rest({ method: 'OPTIONS', url, headers: { origin: 'https://elsewhere.example', 'access-control-request-method': method } });
    const feed = await preflight('/api/v1/prices?x=1', 'GET');
    expect(feed.statusCode).toBe(204);
    expect(feed.headers['access-control-allow-methods']).toBe('GET, HEAD');
    for (const [url, method] of [
      ['/api/v1/prices/snapshots', 'POST'],
      ['/api/v1/prices', 'POST'],
      ['/api/bookings', 'POST'],
      ['/api/bookings', 'GET'],
      ['/browse', 'GET'],
    ] as const) {
      const refused = await preflight(url, method);
      expect([url, method, refused.statusCode, refused.headers['access-control-allow-origin']]).toEqual([url, method, 404, undefined]);
    }
    const ingest = await a.rest({ method: 'POST', url: '/api/v1/prices/snapshots', headers: { origin: 'https://elsewhere.example' }, payload: { rows: [] } });
    expect(ingest.headers['access-control-allow-origin']).toBeUndefined();
    const read = await a.rest({ method: 'GET', url: '/api/v1/prices/h100', headers: { origin: 'https://elsewhere.example' } });
    expect(read.headers['access-control-allow-origin']).toBe('*');
  });

  it('guards ingest with ADMIN_TOKEN: 404 when unset, 401 without or with a wrong token, 400 for unknown slugs', async () => {
    const row = { slug: 'h100', provider: 'aws', spot_price_usd: 2, on_demand_price_usd: 6 };
    expect((await ingest({ rows: [row] }, ADMIN_TOKEN, b)).statusCode).toBe(404);
    expect((await a.rest({ method: 'POST', url: '/api/v1/prices/snapshots', payload: { rows: [row] } })).statusCode).toBe(401);
    expect((await ingest({ rows: [row] }, 'wrong-token-wrong-token-wrong')).statusCode).toBe(401);
    const unknown = await ingest({ rows: [{ ...row, slug: 'b200' }, { ...row, provider: 'ibm' }] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors).toEqual({ 'rows.0.slug': expect.any(String), 'rows.1.provider': expect.any(String) });
    expect((await ingest({ rows: [{ ...row, spot_price_usd: -1 }] })).statusCode).toBe(400);
  });

  it('keeps history: a partial snapshot replaces only its pairs, on every process at once', async () => {
    const added = await ingest({
      taken_at: '2030-01-01T11:00:00Z',
      rows: [
        { slug: 'h100', provider: 'aws', spot_price_usd: 2.1, on_demand_price_usd: 6.5 },
        { slug: 'h100', provider: 'lambda', spot_price_usd: null, on_demand_price_usd: 2.49 },
      ],
    });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toEqual({ id: expect.any(String), taken_at: '2030-01-01T11:00:00.000Z', rows: 2 });

    // Process B learns of the snapshot through NOTIFY and drops its cached feed.
    let feed: { updated_at: string; prices: { slug: string; provider: string; on_demand_price_usd: number; last_seen: string }[] } | undefined;
    for (let i = 0; i < 50; i++) {
      feed = (await b.rest({ method: 'GET', url: '/api/v1/prices/h100' })).json();
      if (feed!.updated_at === '2030-01-01T11:00:00.000Z') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(feed!.updated_at).toBe('2030-01-01T11:00:00.000Z');
    const byProvider = Object.fromEntries(feed!.prices.map((row) => [row.provider, row]));
    expect(byProvider.aws).toMatchObject({ on_demand_price_usd: 6.5, last_seen: '2030-01-01T11:00:00.000Z' });
    expect(byProvider.lambda).toMatchObject({ on_demand_price_usd: 2.49 });
    expect(byProvider.gcp).toMatchObject({ last_seen: '2025-06-01T00:00:00.000Z' });

    const history = await a.gql(GpuPriceHistoryDocument, { gpu: 'h100', provider: 'aws' });
    expect(history.data!.gpuPriceHistory.map((row) => [row.onDemandPriceUsd, row.source])).toEqual([
      [6.88, 'reference'],
      [6.5, 'admin'],
    ]);
  });

  it('tells provenance and freshness in GraphQL, and finds the cheapest', async () => {
    const result = await a.gql(GpuPricesDocument, { gpu: 'h100' });
    const rows = Object.fromEntries(result.data!.gpuPrices.map((row) => [row.provider, row]));
    expect(rows.aws).toMatchObject({ source: 'admin', ageMinutes: 60, freshness: 'FRESH' });
    expect(rows.gcp).toMatchObject({ source: 'reference', freshness: 'EXPIRED' });
    clock.set('2030-01-01T16:00:00Z');
    try {
      expect((await a.gql(GpuPricesDocument, { gpu: 'h100', provider: 'aws' })).data!.gpuPrices[0]).toMatchObject({ freshness: 'STALE' });
    } finally {
      clock.set('2030-01-01T12:00:00Z');
    }
    const cheapest = await a.gql(CheapestGpuDocument, { gpu: 'h100', kind: 'ON_DEMAND' });
    expect(cheapest.data!.cheapestGpu).toEqual({ provider: 'vast', spotPriceUsd: 1.45, onDemandPriceUsd: 1.87 });
    const unknown = await a.gql(GpuPricesDocument, { gpu: 'b200' });
    expect(unknown.errors?.[0]?.extensions).toEqual({ code: 'not_found' });
  });

  it('announces a snapshot added on one process to a subscriber on another', async () => {
    await b.app.listen({ port: 0, host: '127.0.0.1' });
    const address = b.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const client = createClient({ url: `ws://127.0.0.1:${address.port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const received: unknown[] = [];
    const stop = client.subscribe({ query: print(PriceSnapshotAddedDocument) }, { next: (value) => received.push(value), error: () => undefined, complete: () => undefined });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await ingest({ rows: [{ slug: 't4', provider: 'gcp', spot_price_usd: 0.12, on_demand_price_usd: 0.35 }] });
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toEqual([{ data: { priceSnapshotAdded: { id: expect.any(String), takenAt: '2030-01-01T12:00:00.000Z', source: 'admin', rowCount: 1 } } }]);
    stop();
    await client.dispose();
  });
});
