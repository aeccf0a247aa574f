import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { GPU_SLUGS, PROVIDERS, REFRESH_INTERVAL_MINUTES } from '../catalog.js';
import type { PriceService, PriceView } from '../price.service.js';

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

/** Seed 002 Price row. */
export function presentPrice(row: PriceView) {
  return {
    gpu: row.gpu,
    slug: row.slug,
    provider: row.provider,
    spot_price_usd: row.spotPriceUsd,
    on_demand_price_usd: row.onDemandPriceUsd,
    savings_pct: row.savingsPct,
    last_seen: row.lastSeen.toISOString(),
  };
}

interface SnapshotBody {
  taken_at?: string;
  rows: { slug: string; provider: string; spot_price_usd: number | null; on_demand_price_usd: number | null }[];
}

/** The feed's read paths: `/api/v1/prices` and `/api/v1/prices/<gpu>`, any query string. */
const FEED_PATH = /^\/api\/v1\/prices(?:\/[^/?]+)?\/?(?:\?|$)/;

/**
 * Whether CORS applies: reads of the feed (and their preflight) only. @fastify/cors answers preflight
 * for every path of the server through its `OPTIONS *` route, so the decision is made per request;
 * anything else (the admin ingest, every other API path) gets no CORS header and a 404 preflight.
 */
function isFeedRead(request: FastifyRequest): boolean {
  if (!FEED_PATH.test(request.url)) return false;
  const method = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : request.method;
  return method === 'GET' || method === 'HEAD';
}

/** The open, CORS-enabled GPU price feed (seed 002) and its admin ingest route. */
export function registerPriceRoutes(app: FastifyInstance, prices: PriceService, adminToken: string | undefined): void {
  app.register(async (scope) => {
    // Every answer of a feed read, errors and preflight included, is readable from any origin.
    await scope.register(fastifyCors, () => (request: FastifyRequest, settle: (error: Error | null, options: FastifyCorsOptions) => void) =>
      settle(null, isFeedRead(request) ? { origin: '*', methods: ['GET', 'HEAD'] } : { origin: false }),
    );

    scope.get(
      '/api/v1/prices',
      {
        schema: {
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
        },
      },
      async () => {
        const feed = await prices.feed();
        return { updated_at: feed.updatedAt?.toISOString() ?? null, refresh_interval_minutes: REFRESH_INTERVAL_MINUTES, prices: feed.prices.map(presentPrice) };
      },
    );

    scope.get<{ Params: { gpu_slug: string } }>(
      '/api/v1/prices/:gpu_slug',
      {
        schema: {
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
        },
      },
      async (request) => {
        const feed = await prices.forGpu(request.params.gpu_slug);
        return {
          gpu: request.params.gpu_slug,
          updated_at: feed.updatedAt?.toISOString() ?? null,
          refresh_interval_minutes: REFRESH_INTERVAL_MINUTES,
          prices: feed.prices.map(presentPrice),
        };
      },
    );

    scope.post<{ Body: SnapshotBody }>(
      '/api/v1/prices/snapshots',
      {
        schema: {
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
                    slug: { type: 'string' },
                    provider: { type: 'string' },
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
        },
        // Without ADMIN_TOKEN the route does not exist for callers; checked before the body is read.
        onRequest: async (request) => {
          if (!adminToken) throw new AppError('not_found', `no route ${request.method} ${request.url}`);
          prices.authorizeIngest(await request.actor());
        },
      },
      async (request, reply) => {
        const added = await prices.ingest({
          source: 'admin',
          takenAt: request.body.taken_at ? new Date(request.body.taken_at) : undefined,
          rows: request.body.rows.map((row) => ({ slug: row.slug, provider: row.provider, spotPriceUsd: row.spot_price_usd, onDemandPriceUsd: row.on_demand_price_usd })),
        });
        return reply.code(201).send({ id: added.id, taken_at: added.takenAt.toISOString(), rows: added.rowCount });
      },
    );
  });
}
