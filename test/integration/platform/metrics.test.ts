import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../../factories/webhook-receiver.js';
import { bearer, startTestApp, type TestApp, withoutCost } from '../../harness.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

/** The value of one sample of the Prometheus text format; 0 when the series has not appeared yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(/,(?=[a-zA-Z_]\w*=")/).filter(Boolean);
    if (wanted.every((label) => present.includes(label))) return Number(match[3]);
  }
  return 0;
}

/** The sum of every series of a sample name. */
function total(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

// An injected request is recorded in Fastify's onResponse hook, which may run just after the reply resolves.
const recorded = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('GET /metrics', () => {
  let t: TestApp;
  let agent: AgentWithToken;
  let receiver: WebhookReceiver;
  const scrape = async () => {
    const response = await t.rest({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
    expect(response.statusCode).toBe(200);
    await recorded();
    return response.body;
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN, RATE_LIMIT_ANON_PER_MIN: '3' } });
    agent = await bootstrapAgent(t);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('needs the bearer token: none or a wrong one is a 401', async () => {
    const none = await t.rest({ method: 'GET', url: '/metrics' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(none.json()).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect((await t.rest({ method: 'GET', url: '/metrics', headers: bearer(`${METRICS_TOKEN}x`) })).statusCode).toBe(401);
    expect((await t.rest({ method: 'GET', url: '/metrics', headers: { 'x-api-key': METRICS_TOKEN } })).statusCode).toBe(401);
    const allowed = await t.rest({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('counts a REST create by route pattern and status, and a GraphQL query by operation name and outcome', async () => {
    const before = await scrape();
    const created = await createBooking(t, agent, ...(Object.values(hourSlot('2031-05-01T08:00:00Z', 0)) as [string, string]));
    await t.rest({ method: 'DELETE', url: `/api/bookings/${created.id}`, headers: bearer(agent.token) });
    const query = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query: 'query WhoAmI { me { id } }' } });
    expect(withoutCost(query.json())).toEqual({ data: { me: { id: agent.id } } });
    await t.rest({ method: 'POST', url: '/graphql', payload: { query: 'query Broken { nope }' } });
    await t.rest({ method: 'POST', url: '/graphql', headers: bearer('agt_unknown'), payload: { query: 'query WhoAmI { me { id } }' } });
    expect((await t.rest({ method: 'GET', url: '/wp-admin/probe-7f3a' })).statusCode).toBe(404);
    await recorded();
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved('gateway_http_request_duration_seconds_count', { route: '/api/bookings', method: 'POST', status: '201' })).toBe(1);
    // The pattern, not the URL with the id in it.
    expect(moved('gateway_http_request_duration_seconds_count', { route: '/api/bookings/:id', method: 'DELETE', status: '204' })).toBe(1);
    expect(after).not.toContain(created.id);
    expect(moved('gateway_http_request_duration_seconds_count', { route: '(unmatched)', method: 'GET', status: '404' })).toBe(1);
    expect(after).not.toContain('probe-7f3a');
    expect(sample(after, 'gateway_http_request_duration_seconds_bucket', { route: '/api/bookings', method: 'POST', status: '201', le: '+Inf' })).toBe(
      sample(after, 'gateway_http_request_duration_seconds_count', { route: '/api/bookings', method: 'POST', status: '201' }),
    );
    expect(moved('gateway_graphql_operation_duration_seconds_count', { operation: 'WhoAmI', outcome: 'ok' })).toBe(1);
    expect(moved('gateway_graphql_operation_duration_seconds_count', { operation: 'WhoAmI', outcome: 'error' })).toBe(1);
    // A document that does not validate lends no name to a label.
    expect(moved('gateway_graphql_operation_duration_seconds_count', { operation: '(unresolved)', outcome: 'rejected' })).toBe(1);
    expect(after).not.toContain('operation="Broken"');
    // The create wrote its booking.created event to the log.
    expect(moved('gateway_booking_events_newest_id', {})).toBeGreaterThanOrEqual(1);
  });

  it('reads the status report and /metrics from the same request record', async () => {
    const scraped = await scrape();
    const status = (await t.rest({ method: 'GET', url: '/api/status' })).json();
    // Everything answered before the scrape, plus the scrape itself; all of it within five minutes.
    expect(status.metrics.last_5min.total).toBe(total(scraped, 'gateway_http_request_duration_seconds_count') + 1);
  });

  it('counts rate-limit refusals by budget', async () => {
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.rest({ method: 'GET', url: '/api/categories' })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const after = await scrape();
    expect(sample(after, 'gateway_rate_limit_refusals_total', { policy: 'directory-ip' }) - sample(before, 'gateway_rate_limit_refusals_total', { policy: 'directory-ip' })).toBe(1);
  });

  it('counts webhook delivery attempts by outcome', async () => {
    const before = await scrape();
    const registered = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: receiver.url, events: ['booking.created'] } });
    expect(registered.statusCode).toBe(201);
    await createBooking(t, agent, ...(Object.values(hourSlot('2031-05-02T08:00:00Z', 0)) as [string, string]));
    await receiver.waitFor(1);
    let after = await scrape();
    for (let tries = 0; tries < 50 && sample(after, 'gateway_webhook_delivery_attempts_total', { outcome: 'delivered' }) === 0; tries++) after = await scrape();
    expect(sample(after, 'gateway_webhook_delivery_attempts_total', { outcome: 'delivered' }) - sample(before, 'gateway_webhook_delivery_attempts_total', { outcome: 'delivered' })).toBe(1);
    expect(sample(after, 'gateway_webhook_delivery_attempts_total', { outcome: 'failed' })).toBe(0);
  });

  it('reports the database pools, open subscriptions, event lag and price freshness', async () => {
    const text = await scrape();
    expect(text).toMatch(/^gateway_db_pool_connections\{pool="orm",state="in_use"\} \d+$/m);
    expect(text).toMatch(/^gateway_db_pool_connections\{pool="rate_limits",state="idle"\} \d+$/m);
    expect(text).toMatch(/^gateway_db_pool_waiting\{pool="orm"\} 0$/m);
    expect(text).toMatch(/^gateway_graphql_subscriptions_open 0$/m);
    expect(text).toMatch(/^gateway_booking_event_subscriber_lag 0$/m);
    // The bundled reference snapshot is the feed of a fresh install: 2025-06-01.
    expect(sample(text, 'gateway_gpu_price_feed_updated_timestamp_seconds')).toBeGreaterThan(Date.parse('2025-01-01') / 1000);
  });
});

describe('GET /metrics with live subscribers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN }, jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  it('counts open subscriptions and shows the events delivered to them catching up with the log', async () => {
    const scrape = async () => (await t.rest({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) })).body;
    const agent = await bootstrapAgent(t);
    const client = createClient({
      url: `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${agent.token}` },
      retryAttempts: 0,
    });
    const received: unknown[] = [];
    // From the start of the log: the first event arrives by replay or live, whichever comes first; once
    // it has arrived the stream is live, so the second one is handed over by the live feed.
    const subscription = client.iterate<{ bookingEvents: { cursor: string } }>({ query: 'subscription { bookingEvents(after: "0") { cursor } }' });
    const reading = (async () => {
      for await (const event of subscription) received.push(event);
    })();
    try {
      await eventually(async () => (sample(await scrape(), 'gateway_graphql_subscriptions_open') === 1 ? true : undefined));
      await createBooking(t, agent, ...(Object.values(hourSlot('2031-06-01T08:00:00Z', 0)) as [string, string]));
      await eventually(async () => (received.length === 1 ? true : undefined));
      await createBooking(t, agent, ...(Object.values(hourSlot('2031-06-01T08:00:00Z', 1)) as [string, string]));
      await eventually(async () => (received.length === 2 ? true : undefined));
      const text = await scrape();
      expect(sample(text, 'gateway_booking_events_delivered_id')).toBe(sample(text, 'gateway_booking_events_newest_id'));
      expect(sample(text, 'gateway_booking_events_newest_id')).toBeGreaterThan(0);
      expect(sample(text, 'gateway_booking_event_subscriber_lag')).toBe(0);
      expect(sample(text, 'gateway_graphql_ws_connections_open')).toBe(1);
    } finally {
      await subscription.return?.();
      await client.dispose();
      await reading.catch(() => undefined);
    }
    await eventually(async () => (sample(await scrape(), 'gateway_graphql_ws_connections_open') === 0 ? true : undefined));
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
  });
  afterAll(() => t.close());

  it('is not served', async () => {
    expect((await t.rest({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    expect((await t.rest({ method: 'GET', url: '/metrics', headers: bearer('anything-at-all-here') })).statusCode).toBe(404);
  });
});
