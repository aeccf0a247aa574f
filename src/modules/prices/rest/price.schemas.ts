/** The JSON schemas of the GPU price routes (seed 002): validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { GPU_SLUGS, PROVIDERS, REFRESH_INTERVAL_MINUTES } from '../catalog.js';

const examplePrice = {
  gpu: 'NVIDIA H100 80GB',
  slug: 'h100',
  provider: 'aws',
  spot_price_usd: 3.1,
  on_demand_price_usd: 6.88,
  savings_pct: 54.9,
  last_seen: '2031-05-06T13:30:00.000Z',
} as const;

const priceRow = {
  type: 'object',
  additionalProperties: false,
  required: ['gpu', 'slug', 'provider', 'spot_price_usd', 'on_demand_price_usd', 'savings_pct', 'last_seen'],
  properties: {
    gpu: { type: 'string', description: 'The GPU model’s name.' },
    slug: { type: 'string', enum: GPU_SLUGS },
    provider: { type: 'string', enum: [...PROVIDERS] },
    spot_price_usd: { type: ['number', 'null'], description: 'US dollars per GPU-hour; null when the provider has no spot price.' },
    on_demand_price_usd: { type: ['number', 'null'], description: 'US dollars per GPU-hour; null when unknown.' },
    savings_pct: { type: ['number', 'null'], description: 'Percent saved by spot against on-demand, one decimal; null when either price is missing.' },
    last_seen: { type: 'string', format: 'date-time', description: 'When the snapshot holding this price was taken.' },
  },
  examples: [examplePrice],
} as const;

const feedProperties = {
  updated_at: { type: ['string', 'null'], format: 'date-time', description: 'When the newest snapshot was taken; null when there is none.' },
  refresh_interval_minutes: { type: 'integer', description: 'How often the provider adapters add a snapshot.' },
  prices: { type: 'array', items: priceRow },
} as const;

const FEED =
  'Each GPU at each provider from the newest snapshot that holds the pair (a fresh installation serves a bundled reference snapshot until ' +
  `newer rows replace it; \`last_seen\` tells its age). The provider adapters add a snapshot every ${REFRESH_INTERVAL_MINUTES} minutes when configured ` +
  '(PRICE_PROVIDERS), the operator through POST /api/v1/prices/snapshots. Open: no credential, CORS from any origin.';

const errorBody = { type: 'object', required: ['error'], properties: { error: { type: 'string' }, message: { type: 'string' } } } as const;
const validationErrorBody = { type: 'object', required: ['errors'], properties: { errors: { type: 'object', additionalProperties: { type: 'string' } } } } as const;

export const listPricesRoute = {
  operationId: 'listGpuPrices',
  summary: 'Current spot and on-demand prices of every GPU and provider',
  description: FEED,
  tags: ['prices'],
  security: SECURITY.public,
  response: {
    200: {
      description: 'The price feed',
      type: 'object',
      required: ['updated_at', 'refresh_interval_minutes', 'prices'],
      properties: feedProperties,
      examples: [{ updated_at: examplePrice.last_seen, refresh_interval_minutes: REFRESH_INTERVAL_MINUTES, prices: [examplePrice] }],
    },
  },
};

export const gpuPricesRoute = {
  operationId: 'getGpuPrices',
  summary: 'Current prices of one GPU',
  description: `The part of the feed for one GPU, at every provider that prices it; a slug outside the catalogue is 404 \`not_found\` naming the known ones. ${FEED}`,
  tags: ['prices'],
  security: SECURITY.public,
  params: {
    type: 'object',
    required: ['gpu_slug'],
    properties: { gpu_slug: { type: 'string', description: `The GPU’s slug: ${GPU_SLUGS.join(', ')}.`, examples: ['h100'] } },
  },
  response: {
    200: {
      description: 'The GPU’s prices',
      type: 'object',
      required: ['gpu', 'updated_at', 'refresh_interval_minutes', 'prices'],
      properties: { gpu: { type: 'string', description: 'The slug asked for.' }, ...feedProperties },
      examples: [{ gpu: 'h100', updated_at: examplePrice.last_seen, refresh_interval_minutes: REFRESH_INTERVAL_MINUTES, prices: [examplePrice] }],
    },
    404: { ...errorBody, description: 'No GPU of that slug' },
  },
};

export const addSnapshotRoute = {
  operationId: 'addPriceSnapshot',
  summary: 'Add a price snapshot (Authorization: Bearer $ADMIN_TOKEN)',
  description:
    'The operator adds prices for some GPU and provider pairs (each at most once; a price may be null), taken at `taken_at` (default: now; ' +
    'at most 5 minutes ahead). The feed serves them from this answer on, on every process. Without ADMIN_TOKEN configured the route ' +
    'does not exist (404); a wrong token is 401. No CORS.',
  tags: ['prices'],
  security: SECURITY.admin,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['rows'],
    properties: {
      taken_at: { type: 'string', format: 'date-time' },
      rows: {
        type: 'array',
        minItems: 1,
        maxItems: GPU_SLUGS.length * PROVIDERS.length,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['slug', 'provider', 'spot_price_usd', 'on_demand_price_usd'],
          properties: {
            slug: { type: 'string', enum: GPU_SLUGS },
            provider: { type: 'string', enum: [...PROVIDERS] },
            spot_price_usd: { type: ['number', 'null'], minimum: 0, maximum: 100_000, description: 'US dollars per GPU-hour.' },
            on_demand_price_usd: { type: ['number', 'null'], minimum: 0, maximum: 100_000, description: 'US dollars per GPU-hour.' },
          },
        },
      },
    },
    examples: [{ taken_at: '2031-05-06T13:30:00Z', rows: [{ slug: 'h100', provider: 'aws', spot_price_usd: 3.1, on_demand_price_usd: 6.88 }] }],
  },
  response: {
    201: {
      description: 'The snapshot was added',
      type: 'object',
      required: ['id', 'taken_at', 'rows'],
      properties: { id: { type: 'string' }, taken_at: { type: 'string', format: 'date-time' }, rows: { type: 'integer', description: 'Rows stored.' } },
      examples: [{ id: '1287', taken_at: '2031-05-06T13:30:00.000Z', rows: 1 }],
    },
    // A body that fails its schema or names an unknown slug or provider is the field map.
    400: { anyOf: [validationErrorBody, errorBody] },
    401: errorBody,
    404: errorBody,
  },
};
