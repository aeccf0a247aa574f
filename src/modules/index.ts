/**
 * The gateway's modules as the composition root sees them. Platform code never imports from here;
 * `app.ts` and the CLI do.
 */
import { agentsEntities, agentsResolvers, agentsSqlDefinitions } from './agents/index.js';
import { availabilityResolvers } from './availability/index.js';
import { availabilityRulesEntities, availabilityRulesResolvers, availabilityRulesSqlDefinitions } from './availability-rules/index.js';
import { holdsResolvers, holdsSqlDefinitions } from './holds/index.js';
import { bookingEventsEntities, bookingEventsResolvers, bookingEventsSqlDefinitions } from './booking-events/index.js';
import { bookingsEntities, bookingsResolvers, bookingsSqlDefinitions } from './bookings/index.js';
import { calendarFeedsEntities, calendarFeedsResolvers, calendarFeedsSqlDefinitions } from './calendar-feeds/index.js';
import { directoryEntities, directoryResolvers, directorySqlDefinitions } from './directory/index.js';
import { pricesEntities, pricesResolvers, pricesSqlDefinitions } from './prices/index.js';
import { proposalsEntities, proposalsResolvers, proposalsSqlDefinitions } from './proposals/index.js';
import { statusEntities } from './status/index.js';
import { webhooksEntities, webhooksResolvers, webhooksSqlDefinitions } from './webhooks/index.js';

export const entities = [
  ...agentsEntities,
  ...bookingsEntities,
  ...availabilityRulesEntities,
  ...proposalsEntities,
  ...bookingEventsEntities,
  ...webhooksEntities,
  ...calendarFeedsEntities,
  ...directoryEntities,
  ...pricesEntities,
  ...statusEntities,
];
export const resolverClasses = [
  ...agentsResolvers,
  ...bookingsResolvers,
  ...proposalsResolvers,
  ...webhooksResolvers,
  ...bookingEventsResolvers,
  ...calendarFeedsResolvers,
  ...availabilityResolvers,
  ...availabilityRulesResolvers,
  ...holdsResolvers,
  ...directoryResolvers,
  ...pricesResolvers,
];
/** Every function and trigger, in its current definition; applied after the migrations, in this order. */
export const sqlDefinitions = [
  ...agentsSqlDefinitions,
  ...availabilityRulesSqlDefinitions,
  ...bookingsSqlDefinitions,
  ...holdsSqlDefinitions,
  ...proposalsSqlDefinitions,
  ...bookingEventsSqlDefinitions,
  ...webhooksSqlDefinitions,
  ...calendarFeedsSqlDefinitions,
  ...directorySqlDefinitions,
  ...pricesSqlDefinitions,
];

export { createAgentsModule, type AgentsContext } from './agents/index.js';
export { createAvailabilityModule } from './availability/index.js';
export { createAvailabilityRulesModule } from './availability-rules/index.js';
export { createHoldsModule } from './holds/index.js';
export { BOOKING_EVENTS_RESUMPTION, createBookingEventsModule, type BookingEventsContext } from './booking-events/index.js';
export { createBookingsModule } from './bookings/index.js';
export { createCalendarFeedsModule } from './calendar-feeds/index.js';
export { createProposalsModule } from './proposals/index.js';
export { createWebhooksModule } from './webhooks/index.js';
export { createDirectoryModule, SESSION_TTL_SECONDS, type DirectoryContext } from './directory/index.js';
export { createPricesModule, type PriceAdapter } from './prices/index.js';
export { createTokenAnalyticsModule, presentAnalytics, presentSafety } from './token-analytics/index.js';
export { createStatusModule } from './status/index.js';
