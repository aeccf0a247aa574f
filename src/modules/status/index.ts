/**
 * The status report (seed 002) at `/api/status`: health of the database, the pair price feed and the
 * token analytics, with usage counters from the server's own request accounting.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { RequestMetrics } from '../../platform/http/request-metrics.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import type { Logger } from '../../platform/logger.js';
import type { PriceRefreshService } from '../prices/index.js';
import type { TokenAnalyticsService } from '../token-analytics/index.js';
import type { WebhookHealth } from '../webhooks/index.js';
import type { MailHealth } from '../../platform/mail/mailer.js';
import { PairPrice } from './entities/pair-price.entity.js';
import { PairPriceService } from './pair-prices.service.js';
import { StatusService, type DatabaseTopology } from './status.service.js';
import { registerStatusRoutes } from './rest/status.routes.js';

export const statusEntities = [PairPrice];

export function createStatusModule(deps: {
  em: EntityManager;
  clock: Clock;
  requests: RequestMetrics;
  tokens: TokenAnalyticsService;
  priceSources: PriceRefreshService;
  mail: { health(): MailHealth };
  webhooks: { health(): WebhookHealth };
  aggregatorUrl: string;
  logger: Logger;
  version: string;
  metrics: Metrics;
  database: DatabaseTopology;
}) {
  const pairPrices = new PairPriceService(deps.em, deps.clock, deps.aggregatorUrl, deps.tokens, deps.logger);
  // The feed as last refreshed: a scrape never calls the aggregator or the screener.
  deps.metrics.gauge('gateway_pair_price_observed_timestamp_seconds', 'When each token pair\'s price in the status report was observed, by pair and source (aggregator, screener, fallback)', ['pair', 'source'], (set) => {
    for (const quote of pairPrices.lastKnown().quotes) set(quote.observedAt.getTime() / 1000, { pair: quote.pair, source: quote.source });
  });
  const status = new StatusService(deps.em, deps.clock, deps.requests, pairPrices, deps.tokens, deps.priceSources, deps.mail, deps.webhooks, deps.version, deps.database);
  return {
    status,
    registerRoutes: (app: FastifyInstance) => registerStatusRoutes(app, status),
  };
}
