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
 * - proposal: a proposer asks a target to hand over [startsAt, endsAt); pending until accepted
 *   (the slot moves), declined (target) or withdrawn (proposer). Reject leaves it pending.
 * - event: booking.created / cancelled / transferred / reminder, written to `booking_events` (the
 *   outbox) in the transaction of the change; its id is the cursor of subscriptions and webhooks.
 * - delivery: one event on its way to one webhook endpoint, with its attempts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { AgentService } from './agent.service.js';
import { Agent } from './entities/agent.entity.js';
import { BookingSlot } from './entities/booking-slot.entity.js';
import { Booking } from './entities/booking.entity.js';
import { IdempotencyKey } from './entities/idempotency-key.entity.js';
import { BookingEvent } from './entities/booking-event.entity.js';
import { Proposal } from './entities/proposal.entity.js';
import { Webhook, WebhookAttempt, WebhookDelivery } from './entities/webhook.entity.js';
import { AgentResolver } from './graphql/agent.resolver.js';
import { BookingEventResolver } from './graphql/booking-event.resolver.js';
import { ProposalResolver } from './graphql/proposal.resolver.js';
import { WebhookResolver } from './graphql/webhook.resolver.js';
import type { SchedulingContext } from './graphql/context.js';
import { ProposalService } from './proposal.service.js';
import { WebhookService, DELIVER_WEBHOOK_TASK, type WebhookSettings } from './webhook.service.js';
import { BookingEventBus } from './booking-events.js';
import { registerProposalRoutes } from './rest/proposal.routes.js';
import { registerWebhookRoutes } from './rest/webhook.routes.js';
import { AppError } from '../../platform/errors.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Logger } from '../../platform/logger.js';
import type { PlatformContext } from '../../platform/graphql/server.js';
import { BookingResolver } from './graphql/booking.resolver.js';
import { BookingService, EXTEND_HORIZONS_TASK, SEND_REMINDER_TASK } from './booking.service.js';
import { registerBookingRoutes } from './rest/booking.routes.js';
import { createSchedulingLoaders } from './graphql/loaders.js';
import { registerAgentRoutes } from './rest/agent.routes.js';

export type { SchedulingContext } from './graphql/context.js';
export { AgentService } from './agent.service.js';
export type { BookingService } from './booking.service.js';
export type { ProposalService } from './proposal.service.js';
export { toBookingItem } from './booking-item.js';
export { presentProposal } from './rest/proposal.routes.js';

export const schedulingEntities = [Agent, Booking, BookingSlot, IdempotencyKey, Proposal, BookingEvent, Webhook, WebhookDelivery, WebhookAttempt];
export const schedulingResolvers = [AgentResolver, BookingResolver, ProposalResolver, WebhookResolver, BookingEventResolver];

export interface SchedulingDeps {
  em: EntityManager;
  clock: Clock;
  logger: Logger;
  /** The process's LISTEN connection (live booking events). */
  notifications: Notifications;
  bookingCap: number;
  reminderLeadMinutes: number;
  webhooks: WebhookSettings;
}

/** Builds the scheduling services and the adapters over them. */
export function createSchedulingModule(deps: SchedulingDeps) {
  const { em, clock } = deps;
  const agents = new AgentService(em, clock);
  const bookings = new BookingService(em, clock, { bookingCap: deps.bookingCap, reminderLeadMinutes: deps.reminderLeadMinutes });
  const proposals = new ProposalService(em, clock, bookings);
  const webhooks = new WebhookService(em, clock, deps.webhooks, deps.logger);
  const bus = new BookingEventBus(deps.notifications);

  return {
    agents,
    bookings,
    proposals,
    webhooks,
    resolvers: [new AgentResolver(agents), new BookingResolver(agents, bookings), new ProposalResolver(agents, proposals), new WebhookResolver(agents, webhooks), new BookingEventResolver()],
    createContext: (base: PlatformContext): SchedulingContext['scheduling'] => {
      let caller: Promise<Agent | null> | undefined;
      return {
        ...createSchedulingLoaders(base.em),
        caller: () => (caller ??= agents.authenticate(base.credential, base.em).catch(() => null)),
        async bookingEvents(after) {
          if (after !== undefined && !/^\d{1,18}$/.test(after)) throw AppError.validation({ after: 'is not a cursor' });
          const actor = await agents.authenticate(base.credential, base.em);
          return bus.subscribe(base.em, actor.id, after);
        },
      };
    },
    registerRoutes: (app: FastifyInstance) => {
      registerAgentRoutes(app, agents);
      registerBookingRoutes(app, agents, bookings);
      registerProposalRoutes(app, agents, proposals);
      registerWebhookRoutes(app, agents, webhooks);
    },
    /** Job handlers; each runs in its own unit of work. */
    tasks: {
      [DELIVER_WEBHOOK_TASK]: async (payload: unknown) => webhooks.attemptDelivery((payload as { deliveryId: string }).deliveryId),
      [SEND_REMINDER_TASK]: async (payload: unknown) => {
        await bookings.sendReminder((payload as { bookingId: string }).bookingId);
      },
      [EXTEND_HORIZONS_TASK]: async () => {
        await bookings.extendHorizons();
      },
    },
    /** Recurring series are extended to a year ahead every night. */
    crontab: `0 3 * * * ${EXTEND_HORIZONS_TASK}`,
    stop: () => bus.close(),
  };
}
