/**
 * The status report (seed 002) at `/api/status`: health of the database, the pair price feed and the
 * token analytics, with usage counters from the server's own request accounting.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import { SECURITY } from '../../platform/http/openapi.js';
import type { Clock } from '../../platform/clock.js';
import type { RequestMetrics } from '../../platform/http/request-metrics.js';
import type { Logger } from '../../platform/logger.js';
import type { PriceRefreshService } from '../prices/index.js';
import type { TokenAnalyticsService } from '../token-analytics/index.js';
import { PairPrice } from './pair-price.entity.js';
import { PairPriceService } from './pair-prices.service.js';
import { StatusService } from './status.service.js';

export const statusEntities = [PairPrice];

export function createStatusModule(deps: {
  em: EntityManager;
  clock: Clock;
  metrics: RequestMetrics;
  tokens: TokenAnalyticsService;
  priceSources: PriceRefreshService;
  aggregatorUrl: string;
  logger: Logger;
  version: string;
}) {
  const pairPrices = new PairPriceService(deps.em, deps.clock, deps.aggregatorUrl, deps.tokens, deps.logger);
  const status = new StatusService(deps.em, deps.clock, deps.metrics, pairPrices, deps.tokens, deps.priceSources, deps.version);
  return {
    status,
    registerRoutes: (app: FastifyInstance) =>
      app.get('/api/status', { schema: { operationId: 'getStatus', summary: 'Health, prices and usage of the gateway', tags: ['status'], security: SECURITY.public } }, async () => status.report()),
  };
}
