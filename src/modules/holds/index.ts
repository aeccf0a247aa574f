/**
 * Holds: a slot reserved on one or several calendars for a few minutes, then confirmed into bookings or released.
 *
 * Glossary
 * - hold: one id, a range, an expiry, a holder, and the calendars it spans (one held booking each, all or none).
 * - held booking: a `bookings` row with status `held`; its slot blocks like any other while the hold is live.
 * - live: not expired, confirmed or released. An expired hold blocks nothing: writers in its way purge it.
 * - confirm: every held booking becomes a confirmed booking with the same id, in one transaction.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import type { BookingItem, EventAnnouncer } from '../bookings/index.js';
import { HoldResolver } from './graphql/hold.resolver.js';
import { HoldService } from './holds.service.js';
import { holdTools } from './mcp/hold.tools.js';
import { registerHoldRoutes } from './rest/hold.routes.js';
import { holdConfirmFunction } from './sql/hold-confirm.function.js';
import { holdCreateFunction } from './sql/hold-create.function.js';
import { holdItemFunction } from './sql/hold-item.function.js';
import { holdReleaseFunction } from './sql/hold-release.function.js';

export { HOLD_LIMITS, type HoldService } from './holds.service.js';
export type { HoldItem, HoldStatus } from './hold.view.js';

export const holdsResolvers = [HoldResolver];

/** The module's functions, in their current definitions (applied after the migrations). */
export const holdsSqlDefinitions = [holdItemFunction, holdCreateFunction, holdConfirmFunction, holdReleaseFunction];

export function createHoldsModule(deps: {
  statements: Statements;
  clock: Clock;
  events: EventAnnouncer;
  bookingCap: number;
  /** Confirmed bookings, after the commit (reminders due at once). */
  onNewBookings: (bookings: readonly BookingItem[], at: Date) => void;
}) {
  const holds = new HoldService(deps.statements, deps.clock, deps.events, { bookingCap: deps.bookingCap, onNewBookings: deps.onNewBookings });
  return {
    holds,
    resolvers: [new HoldResolver(holds)],
    mcpTools: holdTools(holds),
    registerRoutes: (app: FastifyInstance) => registerHoldRoutes(app, holds),
  };
}
