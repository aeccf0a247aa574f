/**
 * The JSON schema of the status route (seed 002): the OpenAPI document and the serialiser. Every member
 * `StatusService.report()` builds is declared, with its nulls: fast-json-stringify drops what a response
 * schema leaves out, and status.test.ts compares the whole served report.
 */
import { SECURITY } from '../../../platform/http/openapi.js';

const componentStatus = {
  type: 'string',
  enum: ['operational', 'degraded', 'down'],
  description: '`operational`; `degraded`: working with less (a slow database, a source answering from its fallback); `down`: not working.',
} as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;

/** A closed object: every property listed is always sent (nulls included). */
function record<Properties extends Record<string, object>>(properties: Properties, description?: string) {
  return {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties) as (keyof Properties & string)[],
    properties,
    ...(description === undefined ? {} : { description }),
  } as const;
}

const database = record({
  status: { ...componentStatus, description: '`degraded` when `select 1` took longer than 250 ms, `down` when it failed.' },
  latency_ms: { type: 'number', minimum: 0, description: 'How long `select 1` took for this report.' },
  pool_mode: { type: 'string', enum: ['session', 'transaction'], description: 'How connections are pooled (DATABASE_POOL_MODE).' },
  replicas: {
    type: 'array',
    description: 'Each read replica by name (never its address); outside the overall status.',
    items: record({
      name: { type: 'string' },
      status: { ...componentStatus, description: '`operational`: serving reads; `degraded`: lagging past the bound; `down`: unreachable or not a standby.' },
      lag_ms: { type: ['number', 'null'], description: 'Staleness of what it shows, in ms; null when unknown.' },
      behind_bytes: { type: ['number', 'null'], description: 'WAL it has yet to replay, in bytes; null when unknown.' },
      replayed: { type: ['string', 'null'], description: 'Its replay position (an LSN); null when unknown.' },
      reason: { type: ['string', 'null'], description: 'Why it is left out of reads; null while it serves.' },
    }),
  },
});

const priceFeed = record({
  status: componentStatus,
  sources: { type: 'array', items: { type: 'string', enum: ['aggregator', 'screener', 'fallback'] }, description: 'Where pair prices come from, in order of preference.' },
  aggregator_pairs: { ...count, description: 'Pairs asked of the price aggregator.' },
  aggregator_live: { ...count, description: 'Pairs the aggregator answered at the last refresh.' },
  screener_cached: { ...count, description: 'Pairs priced by the DEX screener instead.' },
  sample_price: { type: 'string', description: '`<pair> @ <price>` of the first pair, or `none available`.' },
  last_updated: dateTime,
  last_error: { type: ['string', 'null'], description: 'Why the aggregator gave nothing, or what a refresh still waits for; null when all is well.' },
  pairs: {
    type: 'array',
    items: record({
      pair: { type: 'string' },
      price: { type: 'number' },
      source: { type: 'string', enum: ['aggregator', 'screener', 'fallback'], description: '`fallback`: the last good price kept in the database.' },
      observed_at: dateTime,
    }),
  },
});

const tokenAnalytics = record({
  status: { ...componentStatus, description: '`degraded` when the screener failed last and answers are served from the cache, `down` when the cache is empty too.' },
  provider: { type: 'string', description: 'The DEX screener asked.' },
  api_key_required: { type: 'boolean', const: false },
  endpoints: { type: 'array', items: { type: 'string' } },
  mcp_tools: { type: 'array', items: { type: 'string' } },
  cache: record({ pairs: { ...count, description: 'Tokens held in the cache.' }, trending: { type: 'boolean', const: false } }),
  note: { type: ['string', 'null'], description: 'The last screener error and when it happened; null when the last call succeeded.' },
});

const gpuPrices = record(
  {
    status: { ...componentStatus, enum: ['operational', 'degraded'], description: '`degraded` when a provider failed last (its last good rows stay in the feed).' },
    sources: {
      type: 'array',
      items: record({
        provider: { type: 'string' },
        status: componentStatus,
        last_success: nullableDateTime,
        last_error: { type: ['string', 'null'] },
      }),
    },
  },
  'The GPU price adapters that ran (PRICE_PROVIDERS); none without any.',
);

const mail = record(
  {
    status: { ...componentStatus, enum: ['operational', 'down'], description: '`down` while the last send failed (the overall status then says degraded).' },
    transport: { type: 'string', enum: ['smtp', 'log', 'other'], description: '`log`: without SMTP_URL sign-in links are written to the log.' },
    waiting: { ...count, description: 'Messages accepted and not yet sent.' },
    last_sent: nullableDateTime,
    last_error: {
      anyOf: [record({ at: dateTime, code: { type: 'string', description: 'The mail library’s error code only: its messages name the server.' } }), { type: 'null' }],
    },
  },
  'Sign-in mail.',
);

const webhooks = record(
  {
    status: { ...componentStatus, enum: ['operational', 'degraded'], description: '`degraded` when this process saw a delivery fail or retry in the last 5 minutes.' },
    attempts_last_5min: record({ delivered: count, retrying: count, failed: count }, 'This process’s delivery attempts in the last 5 minutes.'),
    last_failure: {
      anyOf: [
        record({
          at: dateTime,
          kind: {
            type: 'string',
            enum: ['timeout', 'connection_refused', 'connection_failed', 'invalid_response', 'error_status', 'address_refused', 'endpoint_disabled'],
          },
        }),
        { type: 'null' },
      ],
    },
  },
  'Webhook deliveries, outside the overall status: a receiver’s outage is not the gateway’s. Counts and a failure kind, never a URL.',
);

const statusReport = {
  ...record({
    status: {
      ...componentStatus,
      description: '`down` only when the database is; a failing price aggregator, screener or mail server makes it `degraded` at worst.',
    },
    version: { type: 'string' },
    uptime_seconds: { ...count, description: 'Since this process started.' },
    timestamp: { ...dateTime, description: 'When the report was made.' },
    services: record({ database, price_feed: priceFeed, token_analytics: tokenAnalytics, gpu_prices: gpuPrices, mail, webhooks }),
    metrics: record({
      total_agents: count,
      total_trades: { ...count, description: 'Accepted slot-transfer proposals.' },
      supported_pairs: count,
      last_5min: record(
        { total: count, avg_response_ms: { type: 'number', minimum: 0 }, errors_5xx: count },
        'Requests this process answered in the last 5 minutes.',
      ),
    }),
  }),
  description: 'The status report, every figure measured when asked',
  examples: [
    {
      status: 'operational',
      version: '1.0.0',
      uptime_seconds: 5231,
      timestamp: '2031-05-06T14:00:00.000Z',
      services: {
        database: { status: 'operational', latency_ms: 0.84, pool_mode: 'session', replicas: [] },
        price_feed: {
          status: 'operational',
          sources: ['aggregator', 'screener', 'fallback'],
          aggregator_pairs: 3,
          aggregator_live: 3,
          screener_cached: 0,
          sample_price: 'SOL/USDC @ 151.5000',
          last_updated: '2031-05-06T13:59:41.000Z',
          last_error: null,
          pairs: [
            { pair: 'SOL/USDC', price: 151.5, source: 'aggregator', observed_at: '2031-05-06T13:59:40.000Z' },
            { pair: 'BTC/USD', price: 64000.25, source: 'aggregator', observed_at: '2031-05-06T13:59:40.000Z' },
            { pair: 'ETH/USD', price: 3100.5, source: 'aggregator', observed_at: '2031-05-06T13:59:40.000Z' },
          ],
        },
        token_analytics: {
          status: 'operational',
          provider: 'dexscreener',
          api_key_required: false,
          endpoints: ['GET /v1/tokens/:mint/analytics', 'GET /v1/tokens/:mint/safety'],
          mcp_tools: ['get_token_analytics', 'get_token_safety'],
          cache: { pairs: 2, trending: false },
          note: null,
        },
        gpu_prices: { status: 'operational', sources: [] },
        mail: { status: 'operational', transport: 'log', waiting: 0, last_sent: null, last_error: null },
        webhooks: { status: 'operational', attempts_last_5min: { delivered: 12, retrying: 0, failed: 0 }, last_failure: null },
      },
      metrics: { total_agents: 4, total_trades: 1, supported_pairs: 3, last_5min: { total: 310, avg_response_ms: 3.2, errors_5xx: 0 } },
    },
  ],
} as const;

export const statusRoute = {
  operationId: 'getStatus',
  summary: 'Health, prices and usage of the gateway',
  description:
    'Measured when asked, never cached: the database (a `select 1`, its pooling mode and read replicas), the token pair price feed ' +
    '(waiting at most 1 s for a due refresh, then saying what it waits for), token analytics, the GPU price adapters, sign-in mail and ' +
    'webhook deliveries, with counts of agents, accepted proposals and this process’s requests of the last 5 minutes. No credential; ' +
    'the answer is 200 also while a component is down: read `status`.',
  tags: ['status'],
  security: SECURITY.public,
  response: { 200: statusReport },
};
