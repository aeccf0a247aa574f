import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import type { PriceService } from '../price.service.js';
import { presentFeed, presentSnapshotAdded } from './price.presenter.js';
import { addSnapshotRoute, gpuPricesRoute, listPricesRoute } from './price.schemas.js';
import { echo } from '../../../platform/echo.js';

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

    scope.get('/api/v1/prices', { schema: listPricesRoute }, async () => presentFeed(await prices.feed()));

    scope.get<{ Params: { gpu_slug: string } }>('/api/v1/prices/:gpu_slug', { schema: gpuPricesRoute }, async (request) => ({
      gpu: request.params.gpu_slug,
      ...presentFeed(await prices.forGpu(request.params.gpu_slug)),
    }));

    scope.post<{ Body: SnapshotBody }>(
      '/api/v1/prices/snapshots',
      {
        schema: addSnapshotRoute,
        // Without ADMIN_TOKEN the route does not exist for callers; checked before the body is read.
        onRequest: async (request) => {
          if (!adminToken) throw new AppError('not_found', `no route ${request.method} ${echo(request.url)}`);
          prices.authorizeIngest(await request.actor());
        },
      },
      async (request, reply) => {
        const added = await prices.ingest({
          source: 'admin',
          takenAt: request.body.taken_at ? new Date(request.body.taken_at) : undefined,
          rows: request.body.rows.map((row) => ({ slug: row.slug, provider: row.provider, spotPriceUsd: row.spot_price_usd, onDemandPriceUsd: row.on_demand_price_usd })),
        });
        return reply.code(201).send(presentSnapshotAdded(added));
      },
    );
  });
}
