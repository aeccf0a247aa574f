import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TOKEN_PAIRS } from '../../../src/modules/status/pair-prices.service.js';
import { bootstrapAgent, createAgent } from '../../factories/agents.js';
import { postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { startFakeHermes } from '../../factories/fake-hermes.js';
import { MINT, pair, startFakeScreener } from '../../factories/fake-screener.js';
import { startFreezableProxy } from '../../factories/freezable-proxy.js';
import { bearer, createTestDatabase, databaseEnv, startTestApp, type TestApp } from '../../harness.js';

describe('GET /api/status', () => {
  let t: TestApp;
  let hermes: Awaited<ReturnType<typeof startFakeHermes>>;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  const clock = new TestClock(new Date());
  const [sol, btc, eth] = TOKEN_PAIRS;

  beforeAll(async () => {
    hermes = await startFakeHermes({ [sol!.pythId]: 151.5, [btc!.pythId]: 64_000.25, [eth!.pythId]: 3100.5 }, () => Math.floor(clock.now().getTime() / 1000) - 5);
    screener = await startFakeScreener({ [MINT]: [pair({ priceUsd: '149.75' })] });
    t = await startTestApp({ jobs: false, clock, env: { AGGREGATOR_URL: hermes.url, SCREENER_URL: screener.url } });
  });
  afterAll(async () => {
    await t.close();
    await hermes.close();
    await screener.close();
  });

  const status = async () => (await t.rest({ method: 'GET', url: '/api/status' })).json();

  it('reports every member of the seed, measured', async () => {
    const report = await status();
    expect(report).toEqual({
      status: 'operational',
      version: '1.0.0',
      uptime_seconds: expect.any(Number),
      timestamp: clock.now().toISOString(),
      services: {
        database: { status: 'operational', latency_ms: expect.any(Number), pool_mode: t.config.databasePooling.mode, replicas: [] },
        price_feed: {
          status: 'operational',
          sources: ['aggregator', 'screener', 'fallback'],
          aggregator_pairs: 3,
          aggregator_live: 3,
          screener_cached: 0,
          sample_price: 'SOL/USDC @ 151.5000',
          last_updated: clock.now().toISOString(),
          last_error: null,
          pairs: [
            { pair: 'SOL/USDC', price: 151.5, source: 'aggregator', observed_at: expect.any(String) },
            { pair: 'BTC/USD', price: 64000.25, source: 'aggregator', observed_at: expect.any(String) },
            { pair: 'ETH/USD', price: 3100.5, source: 'aggregator', observed_at: expect.any(String) },
          ],
        },
        token_analytics: {
          status: 'operational',
          provider: 'dexscreener',
          api_key_required: false,
          endpoints: ['GET /v1/tokens/:mint/analytics', 'GET /v1/tokens/:mint/safety'],
          mcp_tools: ['get_token_analytics', 'get_token_safety'],
          cache: { pairs: 0, trending: false },
          note: null,
        },
        gpu_prices: { status: 'operational', sources: [] },
        mail: { status: 'operational', transport: 'log', waiting: 0, last_sent: null, last_error: null },
        webhooks: { status: 'operational', attempts_last_5min: { delivered: 0, retrying: 0, failed: 0 }, last_failure: null },
      },
      metrics: {
        total_agents: 0,
        total_trades: 0,
        supported_pairs: 3,
        last_5min: { total: expect.any(Number), avg_response_ms: expect.any(Number), errors_5xx: 0 },
      },
    });
    expect(report.services.database.latency_ms).toBeGreaterThan(0);
  });

  it('changes its figures when traffic, agents, accepted proposals and errors change', async () => {
    const before = await status();
    const root = await bootstrapAgent(t);
    const [proposer, target] = [await createAgent(t, root), await createAgent(t, root)];
    const proposal = (
      await t.rest({
        method: 'POST',
        url: '/api/proposals',
        headers: bearer(proposer.token),
        payload: { targetAgentId: target.id, startsAt: '2031-01-01T09:00:00Z', endsAt: '2031-01-01T10:00:00Z' },
      })
    ).json();
    await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.id}/accept`, headers: bearer(target.token) });
    // A 500: the bookings table goes away under a request, then comes back.
    await t.query('alter table bookings rename to bookings_away');
    expect((await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(root.token) })).statusCode).toBe(500);
    await t.query('alter table bookings_away rename to bookings');

    const after = await status();
    expect(after.metrics.total_agents).toBe(before.metrics.total_agents + 3);
    expect(after.metrics.total_trades).toBe(before.metrics.total_trades + 1);
    expect(after.metrics.last_5min.total).toBeGreaterThanOrEqual(before.metrics.last_5min.total + 7);
    expect(after.metrics.last_5min.errors_5xx).toBe(before.metrics.last_5min.errors_5xx + 1);
  });

  it('still reports, with the last known prices, when refreshing them fails in the database', async () => {
    await t.query('alter table pair_prices rename to pair_prices_away');
    clock.set(new Date(clock.now().getTime() + 31_000));
    try {
      const response = await t.rest({ method: 'GET', url: '/api/status' });
      expect(response.statusCode).toBe(200);
      expect(response.json().services.price_feed.sample_price).toBe('SOL/USDC @ 151.5000');
    } finally {
      await t.query('alter table pair_prices_away rename to pair_prices');
    }
  });

  it('falls back to the screener, then to the last good price, when the aggregator is down', async () => {
    hermes.setDown(true);
    clock.set(new Date(clock.now().getTime() + 31_000));
    try {
      const report = await status();
      expect(report.status).toBe('degraded');
      expect(report.services.price_feed).toMatchObject({
        status: 'degraded',
        aggregator_live: 0,
        screener_cached: 1,
        sample_price: 'SOL/USDC @ 149.7500',
      });
      // BTC and ETH have no screener pair: their last good prices come back from the database.
      expect(report.services.price_feed.pairs.map((quote: { pair: string; source: string; price: number }) => [quote.pair, quote.source, quote.price])).toEqual([
        ['SOL/USDC', 'screener', 149.75],
        ['BTC/USD', 'fallback', 64000.25],
        ['ETH/USD', 'fallback', 3100.5],
      ]);
      const stored = await t.query<{ pair: string; source: string; price: string }>('select pair, source, price::float8::text as price from pair_prices order by pair');
      expect(stored).toEqual([
        { pair: 'BTC/USD', source: 'aggregator', price: '64000.25' },
        { pair: 'ETH/USD', source: 'aggregator', price: '3100.5' },
        { pair: 'SOL/USDC', source: 'screener', price: '149.75' },
      ]);
      expect(report.services.token_analytics.cache.pairs).toBe(1);
    } finally {
      hermes.setDown(false);
    }
  });
});

/** An http URL on a local port that nobody listens on: connections are refused, as without a network. */
async function unreachableUrl(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('GET /api/status without the internet', () => {
  it('is degraded, not down, while the database serves bookings and the directory; down once the database is', async () => {
    const database = await createTestDatabase();
    // The proxy fronts what the pooled connections reach: PostgreSQL, or PgBouncer under test:pooler.
    const proxy = await startFreezableProxy(databaseEnv(database.url).DATABASE_URL!);
    let t: TestApp | undefined;
    try {
      t = await startTestApp({
        databaseUrl: database.url,
        jobs: false,
        // No statement timeout of its own: behind test:pooler's PgBouncer the pooled sessions keep the role's defaults.
        env: { DATABASE_URL: proxy.url, AGGREGATOR_URL: await unreachableUrl(), SCREENER_URL: await unreachableUrl(), DB_CONNECT_TIMEOUT_MS: '1000' },
      });
      const agent = await bootstrapAgent(t);
      // A token read finds the screener unreachable too (nothing cached: 503).
      expect((await t.rest({ method: 'GET', url: `/v1/tokens/${MINT}/analytics` })).statusCode).toBe(503);

      const report = (await t.rest({ method: 'GET', url: '/api/status' })).json();
      expect({
        status: report.status,
        database: report.services.database.status,
        price_feed: report.services.price_feed.status,
        token_analytics: report.services.token_analytics.status,
      }).toEqual({ status: 'degraded', database: 'operational', price_feed: 'down', token_analytics: 'down' });
      expect(report.services.price_feed.last_error).toMatch(/ECONNREFUSED/);
      // The core works meanwhile.
      expect((await postBooking(t, agent, { startsAt: '2031-03-01T09:00:00Z', endsAt: '2031-03-01T10:00:00Z' })).statusCode).toBe(201);
      expect((await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) })).statusCode).toBe(200);
      expect((await t.rest({ method: 'GET', url: '/api/tools' })).statusCode).toBe(200);

      await proxy.refuse();
      const withoutDatabase = await t.rest({ method: 'GET', url: '/api/status' });
      expect(withoutDatabase.statusCode).toBe(200);
      expect({ status: withoutDatabase.json().status, database: withoutDatabase.json().services.database.status }).toEqual({ status: 'down', database: 'down' });
    } finally {
      // Also when the app did not start: an open proxy would keep jest from exiting.
      await t?.close();
      await proxy.close();
      await database.drop();
    }
  }, 30_000);
});
