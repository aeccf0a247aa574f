/**
 * GPU prices (seed 002): snapshots of spot and on-demand prices of eight GPU models at seven providers.
 *
 * Glossary
 * - snapshot: prices taken at one moment from one source; some pairs only, prices may be null; all kept.
 * - feed: for every GPU/provider pair ever seen, the row of the newest snapshot that holds it.
 * - freshness: fresh under 2 h, stale under 12 h, expired beyond.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../platform/metrics/metrics.js';
import type { Clock } from '../../platform/clock.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import { addPriceSnapshotFunction } from './sql/add-price-snapshot.function.js';
import { PriceRow, PriceSnapshot, PriceSource } from './entities/price-snapshot.entity.js';
import { PriceResolver } from './graphql/price.resolver.js';
import { PriceService } from './price.service.js';
import { registerPriceRoutes } from './rest/price.routes.js';
import type { Logger } from '../../platform/logger.js';
import type { PriceAdapter } from './adapters/adapter.js';
import { PriceRefreshService, REFRESH_GPU_PRICES_TASK } from './price-refresh.service.js';

export type { PriceAdapter } from './adapters/adapter.js';
export { PriceService } from './price.service.js';
export { PriceRefreshService } from './price-refresh.service.js';
export const pricesResolvers = [PriceResolver];
export const pricesEntities = [PriceSnapshot, PriceRow, PriceSource];

/** The module's functions, in their current definitions (applied after the migrations). */
export const pricesSqlDefinitions = [addPriceSnapshotFunction];

export function createPricesModule(deps: {
  statements: Statements;
  clock: Clock;
  notifications: Notifications;
  adminToken: string | undefined;
  providers: readonly string[];
  logger: Logger;
  adapters?: readonly PriceAdapter[];
  metrics: Metrics;
}) {
  const prices = new PriceService(deps.statements, deps.clock, deps.notifications);
  const refresher = new PriceRefreshService(deps.statements, deps.clock, prices, deps.providers, deps.logger, deps.adapters);
  // Freshness as timestamps (alert on `time() - …`), read from what the process already holds.
  deps.metrics.gauge('gateway_gpu_price_feed_updated_timestamp_seconds', 'Time of the newest GPU price snapshot in the feed', [], async (set) => {
    const { updatedAt } = await prices.feed();
    if (updatedAt) set(updatedAt.getTime() / 1000);
  });
  deps.metrics.gauge('gateway_gpu_price_source_last_success_timestamp_seconds', 'Last successful refresh of each GPU price adapter', ['provider'], async (set) => {
    for (const source of await refresher.health()) if (source.lastSuccessAt) set(source.lastSuccessAt.getTime() / 1000, { provider: source.provider });
  });
  return {
    prices,
    refresher,
    /** The adapters run every 30 minutes (none when PRICE_PROVIDERS is empty). */
    crontab: deps.providers.length ? `*/30 * * * * ${REFRESH_GPU_PRICES_TASK}` : '',
    tasks: { [REFRESH_GPU_PRICES_TASK]: async () => void (await refresher.refresh()) },
    resolvers: [new PriceResolver(prices, deps.clock)],
    createContext: () => ({ snapshotsAdded: () => prices.snapshotsAdded() }),
    registerRoutes: (app: FastifyInstance) => registerPriceRoutes(app, prices, deps.adminToken),
    start: () => prices.ensureReferenceSnapshot(),
  };
}
