/**
 * Scheduling (seed 000): agents, their calendars and slot transfers.
 *
 * Glossary
 * - agent: a seat that owns a calendar and one credential (`public_token`, `agt_…`, stored as SHA-256).
 * - bootstrap agent: the first agent of an installation, claimed without a credential; every other
 *   agent records the agent that created it as its parent.
 * - booking: a half-open range [startsAt, endsAt) on one agent's calendar; `confirmed` or `cancelled`
 *   (soft: the row stays). With an rrule it is the first occurrence of a series.
 * - occurrence: one concrete [startsAt, endsAt) of a series; each lasts endsAt - startsAt.
 * - slot: a live occurrence as stored in `booking_slots`, where the exclusion constraint refuses overlaps.
 * - cap: confirmed bookings of an agent that have not ended (BOOKING_CAP).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { AgentService } from './agent.service.js';
import { Agent } from './entities/agent.entity.js';
import { BookingSlot } from './entities/booking-slot.entity.js';
import { Booking } from './entities/booking.entity.js';
import { IdempotencyKey } from './entities/idempotency-key.entity.js';
import { AgentResolver } from './graphql/agent.resolver.js';
import { BookingResolver } from './graphql/booking.resolver.js';
import { BookingService } from './booking.service.js';
import { registerBookingRoutes } from './rest/booking.routes.js';
import { createSchedulingLoaders } from './graphql/loaders.js';
import { registerAgentRoutes } from './rest/agent.routes.js';

export type { SchedulingContext } from './graphql/context.js';
export { AgentService } from './agent.service.js';

export const schedulingEntities = [Agent, Booking, BookingSlot, IdempotencyKey];
export const schedulingResolvers = [AgentResolver, BookingResolver];

export interface SchedulingDeps {
  em: EntityManager;
  clock: Clock;
  bookingCap: number;
}

/** Builds the scheduling services and the adapters over them. */
export function createSchedulingModule({ em, clock, bookingCap }: SchedulingDeps) {
  const agents = new AgentService(em, clock);
  const bookings = new BookingService(em, clock, bookingCap);
  return {
    agents,
    bookings,
    resolvers: [new AgentResolver(agents), new BookingResolver(agents, bookings)],
    createLoaders: () => createSchedulingLoaders(agents),
    registerRoutes: (app: FastifyInstance) => {
      registerAgentRoutes(app, agents);
      registerBookingRoutes(app, agents, bookings);
    },
  };
}
