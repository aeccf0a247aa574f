/**
 * Booking events: the log of what happened to each agent's bookings, and its live delivery.
 *
 * Glossary
 * - event: booking.created / cancelled / transferred / reminder (and any type a writer adds), written to
 *   `booking_events` (the outbox) in the transaction of the change; its id is the cursor of subscriptions,
 *   webhooks and the change feed.
 * - cursor: an event's id; `after` (or `since`) a cursor replays the events that followed it, in order.
 *   One agent's cursors commit in order (its row lock); see sql/booking-changes.function.ts for a family's.
 * - change feed: the events after a cursor with each booking as it is now or a tombstone, and `nextSince`
 *   (REST GET /api/bookings/changes, GraphQL bookingChanges, MCP booking_changes).
 * - retention: events are kept BOOKING_EVENTS_RETENTION_DAYS; an older cursor is `cursor_expired`.
 * - bus: the live side: a committed write announces its events; one coalesced NOTIFY tells every process.
 * - feed: one per agent with subscribers in a process; it reads the log when an announcement is missing.
 * - fan-out: an agent's subscribers are handed an event in slices of whole connections.
 * - subscriber stream: one subscription's queue, bounded (subscriber_lagging past it).
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { AfterCommit } from '../../platform/db/after-commit.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError } from '../../platform/errors.js';
import type { PlatformContext } from '../../platform/graphql/server.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import { agentOf } from '../agents/index.js';
import type { BookingEventView } from '../bookings/index.js';
import { BookingEventBus } from './booking-event-bus.js';
import { BookingChangeFeed } from './change-feed.service.js';
import { BookingEvent } from './entities/booking-event.entity.js';
import { BookingEventResolver, type BookingEventsContext } from './graphql/booking-event.resolver.js';
import { bookingChangeTools } from './mcp/booking-change.tools.js';
import { registerBookingChangeRoutes } from './rest/booking-change.routes.js';
import { bookingChangesFunction } from './sql/booking-changes.function.js';
import { NEWEST_EVENT } from './sql/booking-event.sql.js';
import { pruneBookingEventsFunction } from './sql/prune-booking-events.function.js';
import { recordBookingEventFunction } from './sql/record-booking-event.function.js';
import type { ResumableSubscription } from '../../platform/graphql/sse.js';

export { BookingEventBus } from './booking-event-bus.js';
export { publicEventId } from './event-id.js';
export { BOOKING_EVENT_TYPES, BookingEvent, type BookingEventType } from './entities/booking-event.entity.js';
export type { BookingEventsContext } from './graphql/booking-event.resolver.js';
export type { BookingChange, BookingChangePage } from './booking-change.view.js';
export { CHANGE_FEED_LIMITS, type BookingChangeFeed } from './change-feed.service.js';

/** The retention job's task name (graphile-worker). */
export const PRUNE_BOOKING_EVENTS_TASK = 'prune_booking_events';

export const bookingEventsEntities = [BookingEvent];
export const bookingEventsResolvers = [BookingEventResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const bookingEventsSqlDefinitions = [recordBookingEventFunction, bookingChangesFunction, pruneBookingEventsFunction];

/**
 * Event lag: the log's newest event id, the newest this process handed to a subscriber, and how far
 * the agents subscribed here are behind their own newest event (booking-event-bus.ts). Read per scrape.
 */
function registerBookingEventMetrics(metrics: Metrics, bus: BookingEventBus, statements: Statements): void {
  metrics.gauge('gateway_booking_events_newest_id', 'Newest booking event id in the log (all agents, all processes)', [], async (set) => {
    const [row] = await statements.rows(NEWEST_EVENT, []);
    set(Number(row?.newest ?? 0));
  });
  metrics.gauge('gateway_booking_events_delivered_id', 'Newest booking event id this process has handed to a subscriber', [], (set) => set(Number(bus.lastDeliveredCursor)));
  metrics.gauge(
    'gateway_booking_event_subscriber_lag',
    "For the agents with subscribers in this process: the largest gap, in event ids, between an agent's newest event and the last one delivered to its subscribers (0: caught up)",
    [],
    async (set) => set(Number(await bus.subscriberLag())),
  );
}

/**
 * `bookingEvents` resumes from an event id: GraphQL over SSE writes each event's cursor as its SSE id
 * and turns a reconnect's `Last-Event-ID` into `after`.
 */
export const BOOKING_EVENTS_RESUMPTION: ResumableSubscription = { field: 'bookingEvents', argument: 'after', cursorField: 'cursor' };

export interface BookingEventsDeps {
  notifications: Notifications;
  /** Sends the events' NOTIFYs after their commits. */
  afterCommit: AfterCommit;
  statements: Statements;
  logger: Logger;
  metrics: Metrics;
  clock: Clock;
  /** BOOKING_EVENTS_RETENTION_DAYS. */
  retentionDays: number;
}

export function createBookingEventsModule(deps: BookingEventsDeps) {
  const bus = new BookingEventBus(deps.notifications, deps.afterCommit, deps.statements, deps.logger);
  const feed = new BookingChangeFeed(deps.statements, deps.clock, deps.retentionDays, deps.logger);
  registerBookingEventMetrics(deps.metrics, bus, deps.statements);
  return {
    bus,
    feed,
    resolvers: [new BookingEventResolver(feed)],
    mcpTools: bookingChangeTools(feed),
    registerRoutes: (app: FastifyInstance) => registerBookingChangeRoutes(app, feed),
    /** The `bookingEvents` slice of the GraphQL context. */
    createContext: (base: PlatformContext): BookingEventsContext['bookingEvents'] => ({
      async subscribe(after: string | undefined): Promise<AsyncGenerator<BookingEventView>> {
        if (after !== undefined && !/^\d{1,18}$/.test(after)) throw AppError.validation({ after: 'is not a cursor' });
        const agentId = agentOf(await base.actor()).id;
        // A replay from before what is kept would skip what retention deleted.
        if (after !== undefined) await feed.checkCursor(agentId, after, 'after');
        return bus.subscribe(agentId, after, base.connectionId);
      },
    }),
    /** Job handlers; each runs in its own unit of work. */
    tasks: {
      [PRUNE_BOOKING_EVENTS_TASK]: async () => {
        await feed.prune();
      },
    },
    /** Retention runs hourly (one process runs each firing). */
    crontab: `17 * * * * ${PRUNE_BOOKING_EVENTS_TASK}`,
    stop: async () => bus.close(),
  };
}
