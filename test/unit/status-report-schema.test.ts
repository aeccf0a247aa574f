import { afterAll, describe, expect, it } from '@jest/globals';
import Fastify from 'fastify';
import { statusRoute } from '../../src/modules/status/rest/status.schemas.js';
import type { StatusService } from '../../src/modules/status/status.service.js';

/**
 * The status route's response schema is also its serialiser, and fast-json-stringify drops what a schema
 * leaves out and coerces what it types wrongly. Each report below has the type `StatusService.report()`
 * returns, so a member the service adds must be added here, and then fails the round trip until the
 * schema (and with it the OpenAPI document) declares it.
 */
type StatusReport = Awaited<ReturnType<StatusService['report']>>;

/** Every nullable member set, every list holding an item. */
const everythingSet: StatusReport = {
  status: 'degraded',
  version: '1.2.3',
  uptime_seconds: 86_401,
  timestamp: '2031-05-06T14:00:00.000Z',
  services: {
    database: {
      status: 'operational',
      latency_ms: 1.37,
      pool_mode: 'transaction',
      replicas: [{ name: 'replica-1', status: 'degraded', lag_ms: 2_500.5, behind_bytes: 65_536, replayed: '0/3000148', reason: 'lagging 2500 ms behind' }],
    },
    price_feed: {
      status: 'degraded',
      sources: ['aggregator', 'screener', 'fallback'],
      aggregator_pairs: 3,
      aggregator_live: 1,
      screener_cached: 1,
      sample_price: 'SOL/USDC @ 151.5000',
      last_updated: '2031-05-06T13:59:00.000Z',
      last_error: 'aggregator answered 502 (at 2031-05-06T13:58:00.000Z)',
      pairs: [
        { pair: 'SOL/USDC', price: 151.5, source: 'aggregator', observed_at: '2031-05-06T13:59:00.000Z' },
        { pair: 'BTC/USD', price: 64_000.25, source: 'screener', observed_at: '2031-05-06T13:58:30.000Z' },
        { pair: 'ETH/USD', price: 3_100.5, source: 'fallback', observed_at: '2031-05-05T10:00:00.000Z' },
      ],
    },
    token_analytics: {
      status: 'degraded',
      provider: 'dexscreener',
      api_key_required: false,
      endpoints: ['GET /v1/tokens/:mint/analytics', 'GET /v1/tokens/:mint/safety'],
      mcp_tools: ['get_token_analytics', 'get_token_safety'],
      cache: { pairs: 4, trending: false },
      note: 'last screener error at 2031-05-06T13:57:00.000Z: screener answered 429',
    },
    gpu_prices: {
      status: 'degraded',
      sources: [{ provider: 'runpod', status: 'degraded', last_success: '2031-05-06T13:30:00.000Z', last_error: 'runpod answered 503' }],
    },
    mail: { status: 'down', transport: 'smtp', waiting: 2, last_sent: '2031-05-06T12:00:00.000Z', last_error: { at: '2031-05-06T13:00:00.000Z', code: 'ECONNREFUSED' } },
    webhooks: {
      status: 'degraded',
      attempts_last_5min: { delivered: 10, retrying: 2, failed: 1 },
      last_failure: { at: '2031-05-06T13:59:30.000Z', kind: 'error_status' },
    },
  },
  metrics: { total_agents: 12, total_trades: 3, supported_pairs: 3, last_5min: { total: 420, avg_response_ms: 4.25, errors_5xx: 1 } },
};

/** Every nullable member null, every list empty: a fresh installation with nothing reachable. */
const everythingEmpty: StatusReport = {
  ...everythingSet,
  status: 'down',
  services: {
    database: { status: 'down', latency_ms: 1000.01, pool_mode: 'session', replicas: [] },
    price_feed: { ...everythingSet.services.price_feed, status: 'down', aggregator_live: 0, screener_cached: 0, sample_price: 'none available', last_error: null, pairs: [] },
    token_analytics: { ...everythingSet.services.token_analytics, status: 'down', cache: { pairs: 0, trending: false }, note: null },
    gpu_prices: { status: 'operational', sources: [{ provider: 'aws', status: 'down', last_success: null, last_error: null }] },
    mail: { status: 'operational', transport: 'log', waiting: 0, last_sent: null, last_error: null },
    webhooks: { status: 'operational', attempts_last_5min: { delivered: 0, retrying: 0, failed: 0 }, last_failure: null },
  },
};

describe('the status report’s response schema', () => {
  const app = Fastify();
  let next: StatusReport = everythingSet;
  app.get('/api/status', { schema: { response: statusRoute.response } }, async () => next);
  afterAll(() => app.close());

  it.each([
    ['every nullable member set', everythingSet],
    ['every nullable member null and every list empty', everythingEmpty],
  ])('serialises a report with %s exactly as the service built it', async (_, report) => {
    next = report;
    const response = await app.inject({ method: 'GET', url: '/api/status' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(report);
  });
});
