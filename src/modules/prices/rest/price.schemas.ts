/** The JSON schemas of the GPU price routes (seed 002): validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { GPU_SLUGS, PROVIDERS } from '../catalog.js';

const priceRow = {
  type: 'object',
  additionalProperties: false,
  required: ['gpu', 'slug', 'provider', 'spot_price_usd', 'on_demand_price_usd', 'savings_pct', 'last_seen'],
  properties: {
    gpu: { type: 'string' },
    slug: { type: 'string', enum: GPU_SLUGS },
    provider: { type: 'string', enum: [...PROVIDERS] },
    spot_price_usd: { type: ['number', 'null'] },
    on_demand_price_usd: { type: ['number', 'null'] },
    savings_pct: { type: ['number', 'null'] },
    last_seen: { type: 'string', format: 'date-time' },
  },
} as const;

const errorBody = { type: 'object', required: ['error'], properties: { error: { type: 'string' }, message: { type: 'string' } } } as const;
const validationErrorBody = { type: 'object', required: ['errors'], properties: { errors: { type: 'object', additionalProperties: { type: 'string' } } } } as const;

export const listPricesRoute = {
  operationId: 'listGpuPrices',
  summary: 'Current spot and on-demand prices of every GPU and provider',
  tags: ['prices'],
  security: SECURITY.public,
  response: {
    200: {
      type: 'object',
      required: ['updated_at', 'refresh_interval_minutes', 'prices'],
      properties: {
        updated_at: { type: ['string', 'null'], format: 'date-time' },
        refresh_interval_minutes: { type: 'integer' },
        prices: { type: 'array', items: priceRow },
      },
    },
  },
};

export const gpuPricesRoute = {
  operationId: 'getGpuPrices',
  summary: 'Current prices of one GPU',
  tags: ['prices'],
  security: SECURITY.public,
  params: { type: 'object', required: ['gpu_slug'], properties: { gpu_slug: { type: 'string' } } },
  response: {
    200: {
      type: 'object',
      required: ['gpu', 'updated_at', 'refresh_interval_minutes', 'prices'],
      properties: {
        gpu: { type: 'string' },
        updated_at: { type: ['string', 'null'], format: 'date-time' },
        refresh_interval_minutes: { type: 'integer' },
        prices: { type: 'array', items: priceRow },
      },
    },
    404: errorBody,
  },
};

export const addSnapshotRoute = {
  operationId: 'addPriceSnapshot',
  summary: 'Add a price snapshot (Authorization: Bearer $ADMIN_TOKEN)',
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
            spot_price_usd: { type: ['number', 'null'], minimum: 0, maximum: 100_000 },
            on_demand_price_usd: { type: ['number', 'null'], minimum: 0, maximum: 100_000 },
          },
        },
      },
    },
  },
  response: {
    201: {
      type: 'object',
      required: ['id', 'taken_at', 'rows'],
      properties: { id: { type: 'string' }, taken_at: { type: 'string', format: 'date-time' }, rows: { type: 'integer' } },
    },
    // A body that fails its schema or names an unknown slug or provider is the field map.
    400: { anyOf: [validationErrorBody, errorBody] },
    401: errorBody,
    404: errorBody,
  },
};
