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
 * - cap: an agent's live bookings (BOOKING_CAP): a single booking until it ends, a series once while any of its slots has not ended.
 * - proposal: a proposer asks a target to hand over [startsAt, endsAt); pending until accepted
 *   (the slot moves), declined (target) or withdrawn (proposer). Reject leaves it pending.
 * - event: booking.created / cancelled / transferred / reminder, written to `booking_events` (the
 *   outbox) in the transaction of the change; its id is the cursor of subscriptions and webhooks.
 * - delivery: one event on its way to one webhook endpoint, with its attempts.
 * - calendar feed: a read-only iCalendar URL of an agent's bookings with its own token (`cal_…`, stored as SHA-256).
 * - pinned occurrence: an occurrence the feed writes as a RECURRENCE-ID VEVENT at its instant, because calendar
 *   apps would place it elsewhere around a daylight-saving change (a skipped or repeated wall-clock time).
 * - free/busy: which times of a calendar are taken (its slots), without what takes them.
 * - free/busy visibility: who may ask for an agent's free/busy (`family`: itself, its parent, its children; `anyone`; `nobody`: itself).
 * - availability: the free slots common to several agents' calendars, of a duration, on a grid of starts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { agentOf, AgentService } from './agent.service.js';
import { Agent } from './entities/agent.entity.js';
import { BookingSlot } from './entities/booking-slot.entity.js';
import { Booking } from './entities/booking.entity.js';
import { IdempotencyKey } from './entities/idempotency-key.entity.js';
import { BookingEvent } from './entities/booking-event.entity.js';
import { Proposal } from './entities/proposal.entity.js';
import { Webhook, WebhookAttempt, WebhookDelivery } from './entities/webhook.entity.js';
import { CalendarFeed } from './entities/calendar-feed.entity.js';
import { CalendarFeedService } from './calendar-feed.service.js';
import { AvailabilityService } from './availability.service.js';
import { AvailabilityResolver } from './graphql/availability.resolver.js';
import { registerAvailabilityRoutes } from './rest/availability.routes.js';
import { CalendarFeedResolver } from './graphql/calendar-feed.resolver.js';
import { registerCalendarFeedRoutes } from './rest/calendar-feed.routes.js';
import { AgentResolver } from './graphql/agent.resolver.js';
import { BookingEventResolver } from './graphql/booking-event.resolver.js';
import { ProposalResolver } from './graphql/proposal.resolver.js';
import { WebhookResolver } from './graphql/webhook.resolver.js';
import type { SchedulingContext } from './graphql/context.js';
import { ProposalService } from './proposal.service.js';
import { WebhookService, DELIVER_WEBHOOK_TASK, WEBHOOK_ATTEMPT_OUTCOMES, type WebhookAttemptOutcome, type WebhookSettings } from './webhook.service.js';
import type { CounterSeries } from '../../platform/metrics/families.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import { BookingEventBus } from './booking-events.js';
import { NEWEST_EVENT } from './sql/booking-event.sql.js';
import { registerProposalRoutes } from './rest/proposal.routes.js';
import { registerWebhookRoutes } from './rest/webhook.routes.js';
import { AppError, registerConstraintErrors } from '../../platform/errors.js';
import { SCHEDULING_CONSTRAINTS } from './constraint-errors.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import { BackgroundLoop } from '../../platform/jobs/background-loop.js';
import type { Logger } from '../../platform/logger.js';
import type { PlatformContext } from '../../platform/graphql/server.js';
import { BookingResolver } from './graphql/booking.resolver.js';
import { BookingService, EXTEND_HORIZONS_TASK, SEND_REMINDER_TASK } from './booking.service.js';
import { registerBookingRoutes } from './rest/booking.routes.js';
import { createSchedulingLoaders } from './graphql/loaders.js';
import { registerAgentRoutes } from './rest/agent.routes.js';

export type { SchedulingContext } from './graphql/context.js';
export { AgentService, type AgentRecord } from './agent.service.js';
export type { BookingService } from './booking.service.js';
export type { ProposalService } from './proposal.service.js';
export type { AvailabilityService } from './availability.service.js';
export { AVAILABILITY_LIMITS, decodeSlotCursor } from './availability.service.js';
export { presentAvailabilityPage } from './availability.view.js';
export { toBookingItem } from './booking-item.js';
export { BOOKING_LIMITS } from './booking.service.js';
export { SCHEDULING_LIMITS } from './limits.js';
export { presentProposal } from './proposal.view.js';
export type { WebhookHealth, WebhookFailureKind } from './webhook.service.js';

export const schedulingEntities = [Agent, Booking, BookingSlot, IdempotencyKey, Proposal, BookingEvent, Webhook, WebhookDelivery, WebhookAttempt, CalendarFeed];
export const schedulingResolvers = [AgentResolver, BookingResolver, ProposalResolver, WebhookResolver, BookingEventResolver, CalendarFeedResolver, AvailabilityResolver];

export interface SchedulingDeps {
  em: EntityManager;
  clock: Clock;
  logger: Logger;
  /** The process's LISTEN connection (live booking events, credential changes). */
  notifications: Notifications;
  /** Hot-path SQL (named statements). */
  statements: Statements;
  bookingCap: number;
  reminderLeadMinutes: number;
  webhooks: WebhookSettings;
  metrics: Metrics;
}

/** Builds the scheduling services and the adapters over them. */
/** Webhook attempts in flight per process. */
const DISPATCH_CAPACITY = 32;
/** How often due deliveries nobody announced (a writer that died after its commit, another process's retry) are looked for. */
const DISPATCH_INTERVAL_MS = 1_000;
/** The reminder sweep's period; the contract allows a reminder to be up to 60 s late. */
const REMINDER_SWEEP_INTERVAL_MS = 10_000;
const REMINDER_BATCH = 100;

/**
 * Event lag: the log's newest event id, the newest this process handed to a subscriber, and how far
 * the agents subscribed here are behind their own newest event (booking-events.ts). Read per scrape.
 */
function registerBookingEventMetrics(metrics: Metrics, bus: BookingEventBus, statements: Statements): void {
  metrics.gauge('gateway_booking_events_newest_id', 'Newest booking event id in the log (all agents, all processes)', [], async (set) => {
    const [row] = await statements.rows(NEWEST_EVENT, []);
    set(Number(row?.newest ?? 0));
  });
  metrics.gauge('gateway_booking_events_delivered_id', 'Newest booking event id this process has handed to a subscriber', [], (set) => set(Number(bus.lastDeliveredCursor)));
  metrics.gauge(
    'gateway_booking_event_subscriber_lag',
    'For the agents with subscribers in this process: the largest gap, in event ids, between an agent\'s newest event and the last one delivered to its subscribers (0: caught up)',
    [],
    async (set) => set(Number(await bus.subscriberLag())),
  );
}

export function createSchedulingModule(deps: SchedulingDeps) {
  registerConstraintErrors(SCHEDULING_CONSTRAINTS);
  const { em, clock, statements, logger } = deps;
  const bus = new BookingEventBus(deps.notifications, statements, logger);
  const agents = new AgentService(em, clock, statements, deps.notifications);
  const bookings = new BookingService(em, clock, statements, bus, { bookingCap: deps.bookingCap, reminderLeadMinutes: deps.reminderLeadMinutes });
  const availability = new AvailabilityService(statements);
  const proposals = new ProposalService(em, clock, bookings, bus, statements, availability);
  const attemptsTotal = deps.metrics.counter('gateway_webhook_delivery_attempts_total', 'Webhook delivery attempts made by this process, by outcome: delivered, retrying (failed, retry scheduled), failed (given up)', ['outcome']);
  const attemptOutcomes = Object.fromEntries(WEBHOOK_ATTEMPT_OUTCOMES.map((outcome) => [outcome, attemptsTotal.series({ outcome })])) as Record<WebhookAttemptOutcome, CounterSeries>;
  const webhooks = new WebhookService(em, clock, statements, deps.webhooks, logger, attemptOutcomes);
  const calendarFeeds = new CalendarFeedService(em, clock, statements);
  registerBookingEventMetrics(deps.metrics, bus, statements);

  // Webhook deliveries are claimed from their table, woken by the commits that create them.
  const dispatcher = new BackgroundLoop({
    name: 'webhook-dispatcher',
    intervalMs: DISPATCH_INTERVAL_MS,
    logger,
    pass: () => webhooks.deliverDue(DISPATCH_CAPACITY),
  });
  webhooks.onDeliveriesDue(() => dispatcher.kick());
  // Events queued by commits become deliveries in batches, apart from the claims, so a claim never
  // waits for them; woken by the commits and by a dispatcher that found too little due.
  const fanOut = new BackgroundLoop({
    name: 'webhook-fan-out',
    intervalMs: DISPATCH_INTERVAL_MS,
    logger,
    pass: () => webhooks.fanOutQueuedEvents(),
  });
  bus.onDeliveriesCommitted(() => fanOut.kick());
  webhooks.onDeliveriesRunningLow(() => fanOut.kick());
  // Reminders are found by a sweep over an index of unreminded bookings, not queued one job per booking.
  const reminders = new BackgroundLoop({
    name: 'reminder-sweep',
    intervalMs: REMINDER_SWEEP_INTERVAL_MS,
    logger,
    pass: async () => {
      const due = await bookings.dueReminders(REMINDER_BATCH);
      for (const bookingId of due) {
        // One failing reminder must not hold up the others; it is due again at the next sweep.
        await bookings.sendReminder(bookingId).catch((error: unknown) => logger.warn({ err: error, bookingId }, 'sending a reminder failed'));
      }
      return due.length === REMINDER_BATCH;
    },
  });
  bookings.onReminderDue(() => reminders.kick());

  return {
    agents,
    bookings,
    proposals,
    availability,
    webhooks,
    resolvers: [
      new AgentResolver(agents),
      new BookingResolver(bookings),
      new ProposalResolver(proposals),
      new WebhookResolver(webhooks),
      new BookingEventResolver(),
      new CalendarFeedResolver(calendarFeeds),
      new AvailabilityResolver(availability),
    ],
    createContext: (base: PlatformContext): SchedulingContext['scheduling'] => ({
      ...createSchedulingLoaders(statements, base.actor),
      async bookingEvents(after) {
        if (after !== undefined && !/^\d{1,18}$/.test(after)) throw AppError.validation({ after: 'is not a cursor' });
        return bus.subscribe(agentOf(await base.actor()).id, after, base.connectionId);
      },
    }),
    registerRoutes: (app: FastifyInstance) => {
      registerAgentRoutes(app, agents);
      registerBookingRoutes(app, bookings);
      registerProposalRoutes(app, proposals);
      registerWebhookRoutes(app, webhooks);
      registerCalendarFeedRoutes(app, calendarFeeds);
      registerAvailabilityRoutes(app, availability);
    },
    /** Job handlers; each runs in its own unit of work. */
    tasks: {
      [DELIVER_WEBHOOK_TASK]: async (payload: unknown) => webhooks.deliverOne((payload as { deliveryId: string }).deliveryId),
      [SEND_REMINDER_TASK]: async (payload: unknown) => {
        await bookings.sendReminder((payload as { bookingId: string }).bookingId);
      },
      [EXTEND_HORIZONS_TASK]: async () => {
        await bookings.extendHorizons();
      },
    },
    /** Recurring series are extended to a year ahead every night. */
    crontab: `0 3 * * * ${EXTEND_HORIZONS_TASK}`,
    /** The webhook fan-out and dispatcher and the reminder sweep: background work of a process that runs jobs. */
    startBackground() {
      fanOut.start();
      dispatcher.start();
      reminders.start();
    },
    async stop() {
      bus.close();
      await Promise.all([fanOut.stop(), dispatcher.stop(), reminders.stop()]);
      await webhooks.settle();
    },
  };
}
