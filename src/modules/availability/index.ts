/**
 * Availability: the free slots common to several agents' calendars.
 *
 * Glossary
 * - availability: the slots of a duration, on a grid of starts, that every asked calendar has free.
 * - grid: candidate starts every `granularity` minutes since 1970-01-01T00:00Z (stable pages and cursors).
 * - visibility: an agent answers only to those its free/busy visibility admits (agents module).
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { AvailabilityService } from './availability.service.js';
import { AvailabilityResolver } from './graphql/availability.resolver.js';
import { availabilityTools } from './mcp/availability.tools.js';
import { registerAvailabilityRoutes } from './rest/availability.routes.js';

export { AVAILABILITY_LIMITS, decodeSlotCursor, type AvailabilityService } from './availability.service.js';
export { presentAvailabilityPage } from './availability.view.js';
export { AVAILABILITY_TOOL_ARGUMENTS } from './mcp/availability.tools.js';
export { availabilitySearchProperties } from './rest/availability.schemas.js';

export const availabilityResolvers = [AvailabilityResolver];

export function createAvailabilityModule(deps: { statements: Statements; clock: Clock }) {
  const availability = new AvailabilityService(deps.statements, deps.clock);
  return {
    availability,
    resolvers: [new AvailabilityResolver(availability)],
    mcpTools: availabilityTools(availability),
    registerRoutes: (app: FastifyInstance) => registerAvailabilityRoutes(app, availability),
  };
}
