/**
 * Bookings (seed 000): the calendar of each agent, single bookings and recurring series.
 *
 * Glossary
 * - booking: a half-open range [startsAt, endsAt) on one agent's calendar; `confirmed` or `cancelled`
 *   (soft: the row stays). With an rrule it is the first occurrence of a series.
 * - occurrence: one concrete [startsAt, endsAt) of a series; each lasts endsAt - startsAt.
 * - slot: a live occurrence as stored in `booking_slots`, where the exclusion constraint refuses overlaps.
 * - horizon: how far ahead a series' occurrences are written as slots (366 days, extended nightly).
 * - cap: an agent's live bookings (BOOKING_CAP): a single booking until it ends, a series once while
 *   any of its slots has not ended.
 * - free/busy: which times of a calendar are taken (its slots), without what takes them.
 * - writer: the SQL functions that alone write `bookings` and `booking_slots` (sql/, migrations).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import { BackgroundLoop } from '../../platform/jobs/background-loop.js';
import type { Logger } from '../../platform/logger.js';
import { BookingService, EXTEND_HORIZONS_TASK, SEND_REMINDER_TASK } from './booking.service.js';
import type { EventAnnouncer } from './committed-events.js';
import { BOOKING_CONSTRAINTS } from './constraint-errors.js';
import { BookingSlot } from './entities/booking-slot.entity.js';
import { Booking } from './entities/booking.entity.js';
import { IdempotencyKey } from './entities/idempotency-key.entity.js';
import { Hold } from './entities/hold.entity.js';
import { BookingResolver } from './graphql/booking.resolver.js';
import { bookingTools } from './mcp/booking.tools.js';
import { registerBookingRoutes } from './rest/booking.routes.js';
import { bookingItemFunction } from './sql/booking-item.function.js';
import { bookingInsertFunction } from './sql/booking-insert.function.js';
import { bookingTransferFunction } from './sql/booking-transfer.function.js';
import { bookingExcludeOccurrencesFunction } from './sql/booking-exclude-occurrences.function.js';
import { bookingExtendSeriesFunction } from './sql/booking-extend-series.function.js';
import { bookingCancelFunction } from './sql/booking-cancel.function.js';
import { bookingMarkRemindedFunction } from './sql/booking-mark-reminded.function.js';
import { sendBookingReminderFunction } from './sql/send-booking-reminder.function.js';
import { idempotencyLookupFunction } from './sql/idempotency-lookup.function.js';
import { idempotencyRecordFunction } from './sql/idempotency-record.function.js';
import { createBookingFunction } from './sql/create-booking.function.js';
import { cancelBookingFunction } from './sql/cancel-booking.function.js';
import { countLiveBookingsTrigger } from './sql/count-live-bookings.trigger.js';
import { isoInstantFunction } from './sql/iso-instant.function.js';
import { slotIsLiveFunction } from './sql/slot-is-live.function.js';
import { bookingVersionTrigger } from './sql/booking-version.trigger.js';
import { bookingPurgeExpiredHoldsFunction } from './sql/booking-purge-expired-holds.function.js';
import { bookingConfirmHeldFunction } from './sql/booking-confirm-held.function.js';
import { bookingDeleteHeldFunction } from './sql/booking-delete-held.function.js';
import { bookingMoveFunction } from './sql/booking-move.function.js';
import { bookingRefusalFunction } from './sql/booking-refusal.function.js';
import { bookingCapReachedFunction } from './sql/booking-cap-reached.function.js';
import { createGroupBookingFunction } from './sql/create-group-booking.function.js';
import { rescheduleBookingFunction } from './sql/reschedule-booking.function.js';

export { BOOKING_LIMITS, FREE_BUSY_LIMITS, lockAgent, type BookingService } from './booking.service.js';
export { decodeBookingCursor } from './list-cursors.js';
export { BOOKING_FIELDS, inSeedShape, type BookingItem } from './booking.shape.js';
export { committedEvents, type AnnouncedEvent, type BookingEventView, type CommittedEvents, type EventAnnouncer, type PreviousRange, type WrittenEvents } from './committed-events.js';
export { Booking } from './entities/booking.entity.js';
export { BookingNode } from './graphql/booking.types.js';
export { bookingItem as bookingItemSchema, fullBookingItem as fullBookingItemSchema, idempotencyKeyHeader } from './rest/booking.schemas.js';
export { BOOKABLE_TIME, checkRange } from './input-checks.js';
export { findStoredOutcome, replay, storeOutcome, type IdempotentRequest } from './idempotency.js';
export { feedSeries, irregularOccurrences, parseRule, recurrenceIdOf, RecurrenceError, type ParsedRule, type Slot } from './recurrence.js';
export { offsetAt, utcDateTime, zoneTransitions } from './wall-clock.js';

export const bookingsEntities = [Booking, BookingSlot, IdempotencyKey, Hold];
export const bookingsResolvers = [BookingResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const bookingsSqlDefinitions = [
  isoInstantFunction,
  bookingItemFunction,
  slotIsLiveFunction,
  bookingVersionTrigger,
  bookingInsertFunction,
  bookingTransferFunction,
  bookingExcludeOccurrencesFunction,
  bookingExtendSeriesFunction,
  bookingCancelFunction,
  bookingMarkRemindedFunction,
  bookingPurgeExpiredHoldsFunction,
  bookingConfirmHeldFunction,
  bookingDeleteHeldFunction,
  bookingMoveFunction,
  bookingRefusalFunction,
  bookingCapReachedFunction,
  idempotencyLookupFunction,
  idempotencyRecordFunction,
  createBookingFunction,
  createGroupBookingFunction,
  rescheduleBookingFunction,
  sendBookingReminderFunction,
  cancelBookingFunction,
  countLiveBookingsTrigger,
];

export interface BookingsDeps {
  em: EntityManager;
  clock: Clock;
  logger: Logger;
  statements: Statements;
  /** Where committed writes hand their events (the booking-events bus). */
  events: EventAnnouncer;
  bookingCap: number;
  reminderLeadMinutes: number;
}

/** The reminder sweep's period; the contract allows a reminder to be up to 60 s late. */
const REMINDER_SWEEP_INTERVAL_MS = 10_000;
const REMINDER_BATCH = 100;

export function createBookingsModule(deps: BookingsDeps) {
  registerConstraintErrors(BOOKING_CONSTRAINTS);
  const { logger } = deps;
  const bookings = new BookingService(deps.em, deps.clock, deps.statements, deps.events, {
    bookingCap: deps.bookingCap,
    reminderLeadMinutes: deps.reminderLeadMinutes,
  });
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
    bookings,
    resolvers: [new BookingResolver(bookings)],
    mcpTools: bookingTools(bookings),
    registerRoutes: (app: FastifyInstance) => registerBookingRoutes(app, bookings),
    /** Job handlers; each runs in its own unit of work. */
    tasks: {
      [SEND_REMINDER_TASK]: async (payload: unknown) => {
        await bookings.sendReminder((payload as { bookingId: string }).bookingId);
      },
      [EXTEND_HORIZONS_TASK]: async () => {
        await bookings.extendHorizons();
      },
    },
    /** Recurring series are extended to a year ahead every night. */
    crontab: `0 3 * * * ${EXTEND_HORIZONS_TASK}`,
    startBackground: () => reminders.start(),
    stop: () => reminders.stop(),
  };
}
