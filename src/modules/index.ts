/**
 * The gateway's modules as the composition root sees them. Platform code never imports from here;
 * `app.ts` and the CLI do.
 */
import { directoryEntities, directoryResolvers } from './directory/index.js';
import { pricesEntities, pricesResolvers } from './prices/index.js';
import { statusEntities } from './status/index.js';
import { schedulingEntities, schedulingResolvers } from './scheduling/index.js';

export const entities = [...schedulingEntities, ...directoryEntities, ...pricesEntities, ...statusEntities];
export const resolverClasses = [...schedulingResolvers, ...directoryResolvers, ...pricesResolvers];

export { createSchedulingModule, type SchedulingContext } from './scheduling/index.js';
export { createDirectoryModule, SESSION_TTL_SECONDS, type DirectoryContext } from './directory/index.js';
export { createPricesModule, type PriceAdapter } from './prices/index.js';
export { createTokenAnalyticsModule, presentAnalytics, presentSafety } from './token-analytics/index.js';
export { registerMcpEndpoint } from './mcp/index.js';
export { createStatusModule } from './status/index.js';
