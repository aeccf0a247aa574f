import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../platform/clock.js';
import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import { retryTransient } from '../../platform/db/pg-errors.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError, constraintErrorOf, isAppError, type ErrorCode, type FieldErrors } from '../../platform/errors.js';
import { REFUSAL_CODES, refusalError, type Refusal } from '../availability-rules/index.js';
import type { Actor } from '../../platform/auth/actor.js';
import { agentOf, notActingFor, notTheOwner, requireOwner, type AgentRecord } from '../agents/index.js';
import { Booking } from './entities/booking.entity.js';
import { committedEvents, type EventAnnouncer } from './committed-events.js';
import { ALL_BOOKING_FIELDS, bookingColumns, bookingItemOfRow, type BookingItem, type BookingProjection, type BookingRow, type ProjectedBookingItem } from './booking.shape.js';
import { encodeBookingCursor, encodeOccurrenceCursor, type BookingCursor } from './list-cursors.js';
import { checkRange } from './input-checks.js';
import { isUuid } from '../../platform/uuid.js';
import { idempotencyConflict, keysValidAfter, replay, requestHash, storeOutcome, type IdempotentRequest } from './idempotency.js';
import { expandRule, parseNewRule, parseRule, RecurrenceError, type ParsedRule, type Slot } from './recurrence.js';
import { checkRescheduleInput, planReschedule, type RescheduleInput } from './reschedule.js';
import { REFUSAL_SQLSTATE } from './sql/reschedule-booking.function.js';
import {
  BOOKED_SLOTS,
  BOOKING_BY_ID,
  BOOKING_SERIES,
  CREATE_GROUP_BOOKING,
  RESCHEDULE_BOOKING,
  SLOTS_IN_WINDOW,
  CANCEL_BOOKING,
  CLASHING_OCCURRENCES,
  CONFLICTING_BOOKINGS,
  CREATE_BOOKING,
  DUE_REMINDERS,
  pageStatementsOf,
  SEND_BOOKING_REMINDER,
} from './sql/booking.sql.js';
import { echo } from '../../platform/echo.js';

export const BOOKING_LIMITS = {
  agentIdMaxLength: SCHEDULING_LIMITS.agentIdMaxLength,
  rruleMaxLength: 2000,
  listDefault: SCHEDULING_LIMITS.pageDefault,
  listMax: SCHEDULING_LIMITS.pageMax,
  /** Occurrences of a series are materialised (and so conflict-checked) this far ahead. */
  horizonDays: 366,
  /** A rule that yields more slots than this inside the horizon is refused. */
  maxOccurrences: 2000,
  /** `previewBooking` lists this many conflicting bookings, earliest first, and says whether there are more. */
  previewConflictsShown: 100,
  /** Calendars one group booking may span. */
  groupMaxAgents: 20,
} as const;

/**
 * What one `freeBusy` or `slots` question may cover. A quarter is the longest window calendar views ask for;
 * the slot bound keeps the answer (at most that many busy and one more free intervals) a few
 * hundred KiB whatever the calendar holds: slots are not bounded per agent over time.
 */
export const FREE_BUSY_LIMITS = {
  maxWindowDays: 92,
  maxBookedSlots: 2_000,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Refusals a repeat of an idempotent create answers again (the calendar decided them; validation is not stored). */
const REMEMBERED_REFUSALS = new Set<ErrorCode>(['booking_cap_reached', 'hold_expired', 'hold_released', ...REFUSAL_CODES]);

/** Reminder jobs queued before the reminder sweep existed still run under this name. */
export const SEND_REMINDER_TASK = 'send_reminder';
export const EXTEND_HORIZONS_TASK = 'extend_booking_horizons';

export interface CreateBookingInput {
  /** Whose calendar: only the caller's own (REST and GraphQL name it; absent means the caller). */
  agentId?: string | undefined;
  startsAt: Date;
  endsAt: Date;
  rrule?: string | null | undefined;
}

export interface CreateGroupBookingInput {
  /** The calendars: the caller's own and its children's. */
  agentIds: readonly string[];
  startsAt: Date;
  endsAt: Date;
}

export interface BookingWindow {
  from?: Date | undefined;
  to?: Date | undefined;
}

/** A page of a calendar, in the seed's shape: lists are the hot reads, and every adapter sends these times as they are. */
export interface BookingPage<Item extends ProjectedBookingItem = BookingItem> {
  items: Item[];
  hasNextPage: boolean;
  /** Where the next page starts (`after`); null on the last page. */
  nextCursor: string | null;
}

/** The next concrete occurrences of a booking. */
export interface OccurrencePage {
  items: Slot[];
  /** Where the next page starts (`after`); null when no occurrence follows. */
  nextCursor: string | null;
}

/** One live occurrence on the calendar and the booking (single or series) it belongs to. */
export interface BookedSlot extends Slot {
  booking: BookingItem;
}

export interface BookingPreview {
  /** Existing bookings of the agent that the new one (or one of its occurrences) would overlap, earliest first, at most `previewConflictsShown`. */
  conflicts: BookingItem[];
  /** Whether more bookings conflict than `conflicts` lists. */
  moreConflicts: boolean;
  /** The new booking's occurrences that clash, chronological. */
  clashingOccurrences: Slot[];
  capReached: boolean;
  /** Occurrences that would be written (conflict-checked), up to the horizon. */
  occurrenceCount: number;
}

/**
 * Bookings on an agent's calendar: create (single or recurring), list, cancel, occurrences, and
 * the calendar questions around them (preview, free/busy, cancelling one occurrence).
 *
 * Overlaps are refused by PostgreSQL (an exclusion constraint on `booking_slots`); the cap and the
 * idempotency record are checked under a lock on the agent's row, so an agent's writes are serial.
 */
export class BookingService {
  private reminderDue: () => void = () => undefined;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly statements: Statements,
    private readonly events: EventAnnouncer,
    private readonly options: { bookingCap: number; reminderLeadMinutes: number },
  ) {}

  async create(caller: Actor, input: CreateBookingInput, idempotencyKey?: string): Promise<BookingItem> {
    const actor = agentOf(caller);
    const plan = this.plan(actor, input);
    const request: IdempotentRequest | undefined = idempotencyKey
      ? { agentId: actor.id, operation: 'create_booking', key: idempotencyKey, body: input }
      : undefined;
    const now = this.clock.now();
    try {
      const row = await retryTransient(() =>
        this.statements.one(CREATE_BOOKING, [
          actor.id,
          input.startsAt,
          input.endsAt,
          // A local UNTIL is stored as the UTC instant it names (RFC 5545 wants UTC with a zoned DTSTART).
          plan.rule?.text ?? null,
          slotsJson(plan.slots),
          this.options.bookingCap,
          request?.key ?? null,
          request ? requestHash(request.body) : null,
          keysValidAfter(now),
          now,
        ]),
      );
      const outcome = row!.outcome;
      if ('conflict' in outcome) throw idempotencyConflict();
      if ('replay' in outcome) return replay(outcome.replay);
      if ('capReached' in outcome) throw capReached(this.options.bookingCap);
      if ('refused' in outcome) throw refusalError(outcome.refused);
      this.events.announce(committedEvents(outcome, outcome.booking, now));
      this.noteNewBooking(outcome.booking, now);
      return outcome.booking;
    } catch (error) {
      const domainError = constraintErrorOf(error) ?? error;
      if (request && isAppError(domainError) && REMEMBERED_REFUSALS.has(domainError.code)) {
        // The first answer to this key was a refusal; a repeat must get the same answer.
        await this.em.transactional((tx) =>
          storeOutcome(tx, request, { error: { code: domainError.code, message: domainError.message } }, this.clock.now()),
        );
      }
      throw domainError;
    }
  }

  /**
   * One meeting on several calendars the caller may act for (its own and its children's: agents/access.ts `actFor`),
   * all or none, under each calendar's rules, with one booking.created event per calendar (`create_group_booking`).
   * Answers the bookings in agent id order.
   */
  async createGroup(caller: Actor, input: CreateGroupBookingInput, idempotencyKey?: string): Promise<BookingItem[]> {
    const actor = agentOf(caller);
    const fields: FieldErrors = {};
    const agentIds = [...new Set(input.agentIds.map((id) => id.toLowerCase()))];
    if (agentIds.length < 1 || agentIds.length > BOOKING_LIMITS.groupMaxAgents) fields.agentIds = `must name 1 to ${BOOKING_LIMITS.groupMaxAgents} agents`;
    else if (agentIds.some((id) => !isUuid(id))) fields.agentIds = 'must be agent ids';
    checkRange(input.startsAt, input.endsAt, fields);
    if (Object.keys(fields).length) throw AppError.validation(fields);
    const request: IdempotentRequest | undefined = idempotencyKey
      ? { agentId: actor.id, operation: 'create_group_booking', key: idempotencyKey, body: { ...input, agentIds: [...agentIds].sort() } }
      : undefined;
    const now = this.clock.now();
    try {
      const { outcome } = (await retryTransient(() =>
        this.statements.one(CREATE_GROUP_BOOKING, [
          actor.id,
          agentIds,
          input.startsAt,
          input.endsAt,
          this.options.bookingCap,
          request?.key ?? null,
          request ? requestHash(request.body) : null,
          keysValidAfter(now),
          now,
        ]),
      ))!;
      if ('conflict' in outcome) throw idempotencyConflict();
      if ('replay' in outcome) return replay(outcome.replay);
      if ('forbidden' in outcome) throw notActingFor('book on', input.agentIds, outcome.forbidden);
      if ('capReached' in outcome) throw capReached(this.options.bookingCap, outcome.capReached);
      if ('refused' in outcome) throw refusalError(outcome.refused);
      const byAgent = new Map(outcome.bookings.map((booking) => [booking.agentId, booking]));
      this.events.announce(committedEvents(outcome, (agentId) => byAgent.get(agentId)!, now));
      for (const booking of outcome.bookings) this.noteNewBooking(booking, now);
      return outcome.bookings;
    } catch (error) {
      const domainError = constraintErrorOf(error) ?? error;
      if (request && isAppError(domainError) && REMEMBERED_REFUSALS.has(domainError.code)) {
        await this.em.transactional((tx) => storeOutcome(tx, request, { error: { code: domainError.code, message: domainError.message } }, this.clock.now()));
      }
      throw domainError;
    }
  }

  /**
   * Moves one of the caller's bookings to a new range, keeping its id (see reschedule.ts for series), under every
   * rule the caller's own creates face, with optimistic concurrency: a stale `expectedVersion` is `version_mismatch`.
   * One booking.rescheduled event carries the range before the move. Answers the moved booking (for `occurrence` and
   * `following`, the new one).
   */
  async reschedule(caller: Actor, input: RescheduleInput): Promise<BookingItem> {
    const actor = agentOf(caller);
    checkRescheduleInput(input);
    if (!isUuid(input.bookingId)) throw bookingNotFound(input.bookingId);
    // Planned from the booking as read; written only if it is still that version (else planned again, unless the
    // caller named the version it expects).
    for (let attempt = 1; ; attempt++) {
      const current = await this.statements.one(BOOKING_SERIES, [input.bookingId]);
      if (!current) throw bookingNotFound(input.bookingId);
      requireOwner(actor, current.agent_id, 'booking');
      if (current.status !== 'confirmed') throw new AppError('conflict', `the booking is ${current.status}: only a confirmed booking can be rescheduled`);
      if (input.expectedVersion !== undefined && current.version !== input.expectedVersion) throw versionMismatch(input.expectedVersion, current.version);
      const now = this.clock.now();
      const plan = planReschedule(
        { startsAt: new Date(current.starts_at), endsAt: new Date(current.ends_at), rrule: current.rrule, exdates: current.exdates },
        input,
        { horizonDays: BOOKING_LIMITS.horizonDays, maxOccurrences: BOOKING_LIMITS.maxOccurrences, now },
      );
      let outcome;
      try {
        ({ outcome } = (await retryTransient(() =>
          this.statements.one(RESCHEDULE_BOOKING, [
            actor.id,
            input.bookingId,
            current.version,
            plan.scope,
            plan.occurrence,
            plan.startsAt,
            plan.endsAt,
            plan.rrule,
            JSON.stringify(plan.exdates),
            slotsJson(plan.slots),
            plan.keptRrule,
            plan.keptExdates && JSON.stringify(plan.keptExdates),
            now,
          ]),
        ))!);
      } catch (error) {
        throw refusalRaised(error) ?? constraintErrorOf(error) ?? error;
      }
      if ('missing' in outcome) throw bookingNotFound(input.bookingId);
      if ('forbidden' in outcome) throw notTheOwner('booking');
      if ('notConfirmed' in outcome) throw new AppError('conflict', `the booking is ${outcome.notConfirmed}: only a confirmed booking can be rescheduled`);
      if ('versionMismatch' in outcome) {
        if (input.expectedVersion === undefined && attempt < 3) continue;
        throw versionMismatch(input.expectedVersion ?? current.version, outcome.versionMismatch);
      }
      if ('refused' in outcome) throw refusalError(outcome.refused);
      this.events.announce(committedEvents(outcome, outcome.booking, now, outcome.previous));
      this.noteNewBooking(outcome.booking, now);
      return outcome.booking;
    }
  }

  /** What `create` would do, without writing: conflicts, clashing occurrences, the cap. */
  async preview(caller: Actor, input: CreateBookingInput): Promise<BookingPreview> {
    const actor = agentOf(caller);
    const plan = this.plan(actor, input);
    const occurrences = slotsJson(plan.slots);
    const [clashing, conflicts] = await Promise.all([
      this.statements.rows(CLASHING_OCCURRENCES, [actor.id, occurrences, this.clock.now()]),
      this.statements.rows(CONFLICTING_BOOKINGS, [actor.id, occurrences, this.clock.now(), BOOKING_LIMITS.previewConflictsShown + 1]),
    ]);
    return {
      conflicts: conflicts.slice(0, BOOKING_LIMITS.previewConflictsShown).map(bookingItemOfRow),
      moreConflicts: conflicts.length > BOOKING_LIMITS.previewConflictsShown,
      clashingOccurrences: clashing.map((row) => ({ startsAt: new Date(row.starts_at), endsAt: new Date(row.ends_at) })),
      capReached: (await this.liveBookingCount(this.em, actor.id, this.clock.now())) >= this.options.bookingCap,
      occurrenceCount: plan.slots.length,
    };
  }

  /**
   * The caller's bookings (confirmed and cancelled) intersecting `[from, to)`, by `startsAt`: every field,
   * or those of a projection (GraphQL reads only what its client selected).
   */
  async list(caller: Actor, window: BookingWindow, limit: number, after?: BookingCursor): Promise<BookingPage>;
  async list<Item extends ProjectedBookingItem>(caller: Actor, window: BookingWindow, limit: number, after: BookingCursor | undefined, projection: BookingProjection<Item>): Promise<BookingPage<Item>>;
  async list(caller: Actor, window: BookingWindow, limit: number, after?: BookingCursor, projection: BookingProjection = ALL_BOOKING_FIELDS): Promise<BookingPage<ProjectedBookingItem>> {
    const actor = agentOf(caller);
    checkWindow(window);
    if (window.from && window.to && window.from.getTime() === window.to.getTime()) return { items: [], hasNextPage: false, nextCursor: null };
    const page = pageStatementsOf(projection);
    const rows = window.from
      ? await this.statements.rows(page.overlapping, [actor.id, window.from, window.to ?? null, after?.startsAt ?? null, after?.id ?? null, limit + 1])
      : await this.statements.rows(page.fromStart, [actor.id, window.to ?? null, after?.startsAt ?? null, after?.id ?? null, limit + 1]);
    const items = rows.slice(0, limit).map(projection.itemOfRow);
    const hasNextPage = rows.length > limit;
    return { items, hasNextPage, nextCursor: hasNextPage ? encodeBookingCursor(items.at(-1)!) : null };
  }

  async get(caller: Actor, bookingId: string): Promise<BookingItem> {
    const actor = agentOf(caller);
    const row = isUuid(bookingId) ? await this.statements.one(BOOKING_BY_ID, [bookingId]) : undefined;
    if (!row) throw bookingNotFound(bookingId);
    requireOwner(actor, row.agent_id, 'booking');
    return bookingItemOfRow(row);
  }

  /** Soft-cancel: the row stays (audit), its slots are freed. Cancelling twice is fine. */
  async cancel(caller: Actor, bookingId: string): Promise<BookingItem> {
    const actor = agentOf(caller);
    if (!isUuid(bookingId)) throw bookingNotFound(bookingId);
    const now = this.clock.now();
    const outcome = (await retryTransient(() => this.statements.one(CANCEL_BOOKING, [actor.id, bookingId, now])))!.outcome;
    if ('missing' in outcome) throw bookingNotFound(bookingId);
    if ('forbidden' in outcome) throw notTheOwner('booking');
    if (outcome.events) this.events.announce(committedEvents({ events: outcome.events }, outcome.booking, now));
    return outcome.booking;
  }

  /** Removes one occurrence of a series (an EXDATE) and frees its slot. */
  async cancelOccurrence(caller: Actor, bookingId: string, startsAt: Date): Promise<BookingItem> {
    const actor = agentOf(caller);
    return retryTransient(() =>
      this.em.transactional(async (tx) => {
        await lockAgent(tx, actor.id);
        // Read again under the lock: the writers change the row in SQL, so an entity an earlier call of
        // the same operation loaded (the unit of work keeps it) may be out of date.
        const booking = await this.findOwned(tx, actor, bookingId, { refresh: true });
        if (!booking.rrule) throw AppError.validation({ bookingId: 'is not a recurring booking: cancel the booking instead' });
        if (booking.status !== 'confirmed') throw AppError.validation({ bookingId: 'is cancelled' });
        const occurrence = this.expandStored(booking, { from: startsAt, limit: 1 })[0];
        if (!occurrence || occurrence.startsAt.getTime() !== startsAt.getTime()) {
          throw new AppError('not_found', `the booking has no occurrence starting at ${startsAt.toISOString()}`);
        }
        return excludeOccurrences(tx, booking.id, [startsAt]);
      }),
    );
  }

  /**
   * The next `limit` occurrences starting at or after now. A booking without a rule has its own slot
   * until it starts; a cancelled booking has none; a stored rule that no longer parses is `bad_rrule`.
   */
  /** The next `limit` occurrences from now, or from just after the occurrence starting at `after`. */
  async occurrences(caller: Actor, bookingId: string, limit: number, after?: Date): Promise<OccurrencePage> {
    const actor = agentOf(caller);
    const booking = await this.findOwned(this.em, actor, bookingId);
    const now = this.clock.now();
    const from = after && after >= now ? new Date(after.getTime() + 1) : now;
    if (booking.status !== 'confirmed') return { items: [], nextCursor: null };
    if (!booking.rrule) return { items: booking.startsAt >= from ? [{ startsAt: booking.startsAt, endsAt: booking.endsAt }] : [], nextCursor: null };
    const slots = this.expandStored(booking, { from, limit: limit + 1 });
    const items = slots.slice(0, limit);
    return { items, nextCursor: slots.length > limit ? encodeOccurrenceCursor(items.at(-1)!) : null };
  }

  /**
   * The caller's live occurrences (slots) that intersect `[from, to)`, each with its booking: what a
   * calendar view draws, series included, cancelled occurrences left out. The same bounds as `freeBusy`.
   */
  async slots(caller: Actor, from: Date, to: Date): Promise<BookedSlot[]> {
    const actor = agentOf(caller);
    checkCalendarWindow(from, to);
    const rows = await this.statements.rows(BOOKED_SLOTS, [actor.id, from, to, FREE_BUSY_LIMITS.maxBookedSlots + 1]);
    if (rows.length > FREE_BUSY_LIMITS.maxBookedSlots) throw tooManySlots();
    return rows.map((row) => ({ startsAt: new Date(row.slot_starts_at), endsAt: new Date(row.slot_ends_at), booking: bookingItemOfRow(row) }));
  }

  /** Busy intervals (merged) of the caller's calendar inside `[from, to)`, and the free gaps. */
  async freeBusy(caller: Actor, from: Date, to: Date): Promise<{ busy: Slot[]; free: Slot[] }> {
    const actor = agentOf(caller);
    checkCalendarWindow(from, to);
    const rows = await this.statements.rows(SLOTS_IN_WINDOW, [actor.id, from, to, FREE_BUSY_LIMITS.maxBookedSlots + 1, this.clock.now()]);
    if (rows.length > FREE_BUSY_LIMITS.maxBookedSlots) throw tooManySlots();
    const busy: Slot[] = [];
    for (const row of rows) {
      const slot = {
        startsAt: new Date(Math.max(new Date(row.starts_at).getTime(), from.getTime())),
        endsAt: new Date(Math.min(new Date(row.ends_at).getTime(), to.getTime())),
      };
      const last = busy[busy.length - 1];
      if (last && last.endsAt >= slot.startsAt) last.endsAt = slot.endsAt > last.endsAt ? slot.endsAt : last.endsAt;
      else busy.push(slot);
    }
    const free: Slot[] = [];
    let cursor = from;
    for (const slot of busy) {
      if (slot.startsAt > cursor) free.push({ startsAt: cursor, endsAt: slot.startsAt });
      cursor = slot.endsAt;
    }
    if (cursor < to) free.push({ startsAt: cursor, endsAt: to });
    return { busy, free };
  }

  /** After the commit of a new booking: a booking that starts inside the reminder lead is reminded at once. */
  noteNewBooking(booking: BookingItem, now: Date): void {
    const startsAt = Date.parse(booking.startsAt);
    if (startsAt - this.options.reminderLeadMinutes * 60_000 <= now.getTime() && startsAt > now.getTime()) this.reminderDue();
  }

  /** Who sends reminders that are due now (the sweep). */
  onReminderDue(kick: () => void): void {
    this.reminderDue = kick;
  }

  /**
   * The daily `extend_booking_horizons` job: writes the slots of open-ended series up to the horizon
   * again, so occurrences are always conflict-checked a year ahead. An occurrence whose time another
   * booking took in the meantime (it was beyond the horizon then) is removed from the series (EXDATE).
   */
  async extendHorizons(): Promise<{ series: number; slots: number; skipped: number }> {
    const now = this.clock.now();
    const horizon = new Date(now.getTime() + BOOKING_LIMITS.horizonDays * DAY_MS);
    // A series none of whose slots is left (its booked occurrences all cancelled, the next one beyond
    // the horizon then) is extended from its start: joining only its slots left it unbooked for good.
    const due = await this.em.fork().execute<{ id: string; agent_id: string; last: Date | string }[]>(
      `select b.id, b.agent_id, coalesce(max(s.starts_at), b.starts_at) as last
         from bookings b left join booking_slots s on s.booking_id = b.id
        where b.status = 'confirmed' and b.rrule is not null
        group by b.id
       having coalesce(max(s.starts_at), b.starts_at) < ?`,
      [new Date(horizon.getTime() - DAY_MS)],
    );
    let slots = 0;
    let skipped = 0;
    let series = 0;
    for (const row of due) {
      await retryTransient(() =>
        this.em.fork().transactional(async (tx) => {
          await lockAgent(tx, row.agent_id);
          const booking = await tx.findOneOrFail(Booking, row.id);
          if (booking.status !== 'confirmed' || !booking.rrule) return;
          let candidates: Slot[];
          try {
            const rule = parseRule(booking.rrule, booking.startsAt);
            candidates = expandRule(rule, booking, {
              from: new Date(new Date(row.last).getTime() + 1),
              before: horizon,
              limit: BOOKING_LIMITS.maxOccurrences,
              excluded: booking.exdates.map((date) => new Date(date)),
            });
          } catch {
            return; // a stored rule that no longer parses stays as it is (occurrences answer bad_rrule)
          }
          if (!candidates.length) return;
          const outcome = await tx.execute<{ extended: { added: number; skipped: number } }[]>('select booking_extend_series(?, ?::jsonb, ?) as extended', [
            booking.id,
            slotsJson(candidates),
            now,
          ]);
          series++;
          slots += outcome[0]!.extended.added;
          skipped += outcome[0]!.extended.skipped;
        }),
      );
    }
    return { series, slots, skipped };
  }

  /** Bookings whose reminder is due now: starting within REMINDER_LEAD_MINUTES and not yet reminded. */
  async dueReminders(limit: number): Promise<string[]> {
    const now = this.clock.now();
    const dueBy = new Date(now.getTime() + this.options.reminderLeadMinutes * 60_000);
    return (await this.statements.rows(DUE_REMINDERS, [now, dueBy, limit])).map((row) => row.id);
  }

  /** Once per confirmed booking that has not started: sets `warningSentAt` and emits `booking.reminder` (one SQL function). */
  async sendReminder(bookingId: string): Promise<boolean> {
    const now = this.clock.now();
    const { outcome } = (await retryTransient(() => this.statements.one(SEND_BOOKING_REMINDER, [bookingId, now])))!;
    if (!outcome) return false;
    this.events.announce(committedEvents(outcome, outcome.booking, now));
    return true;
  }

  /** Validates the request and works out the slots it would occupy. */
  private plan(actor: AgentRecord, input: CreateBookingInput): { slots: Slot[]; rule?: ParsedRule } {
    const fields: FieldErrors = {};
    if (input.agentId !== undefined && (input.agentId.length < 1 || input.agentId.length > BOOKING_LIMITS.agentIdMaxLength)) {
      fields.agentId = `must be 1 to ${BOOKING_LIMITS.agentIdMaxLength} characters`;
    }
    checkRange(input.startsAt, input.endsAt, fields);
    let rule: ParsedRule | undefined;
    if (input.rrule && input.rrule.length > BOOKING_LIMITS.rruleMaxLength) {
      fields.rrule = `must be at most ${BOOKING_LIMITS.rruleMaxLength} characters`;
    } else if (input.rrule !== undefined && input.rrule !== null && !fields.startsAt) {
      try {
        rule = parseNewRule(input.rrule, input.startsAt);
      } catch (error) {
        if (!(error instanceof RecurrenceError)) throw error;
        fields.rrule = `is not a valid recurrence rule: ${error.message}`;
      }
    }
    if (Object.keys(fields).length) throw AppError.validation(fields);
    if (input.agentId !== undefined && input.agentId !== actor.id) throw new AppError('forbidden', 'agentId must be the agent of the credential');

    const booking = { startsAt: input.startsAt, endsAt: input.endsAt };
    if (!rule) return { slots: [booking] };
    // Occurrences are conflict-checked up to the horizon; a year of a rule is the promise.
    const horizonStart = Math.max(this.clock.now().getTime(), input.startsAt.getTime());
    const slots = expandRule(rule, booking, {
      before: new Date(horizonStart + BOOKING_LIMITS.horizonDays * DAY_MS),
      limit: BOOKING_LIMITS.maxOccurrences + 1,
    });
    if (slots.length > BOOKING_LIMITS.maxOccurrences) {
      throw AppError.validation({
        rrule: `expands to more than ${BOOKING_LIMITS.maxOccurrences} occurrences within ${BOOKING_LIMITS.horizonDays} days; use a coarser rule or COUNT`,
      });
    }
    return { slots, rule };
  }

  private expandStored(booking: Booking, options: { from: Date; limit: number }): Slot[] {
    let rule: ParsedRule;
    try {
      rule = parseRule(booking.rrule ?? '', booking.startsAt);
    } catch (error) {
      if (!(error instanceof RecurrenceError)) throw error;
      throw new AppError('bad_rrule', `the stored rule does not parse (${error.message}); cancel the booking and create it again`);
    }
    return expandRule(rule, booking, { ...options, excluded: booking.exdates.map((date) => new Date(date)) });
  }

  private async findOwned(em: EntityManager, actor: AgentRecord, bookingId: string, options: { refresh?: boolean } = {}): Promise<Booking> {
    const booking = isUuid(bookingId) ? await em.findOne(Booking, { id: bookingId }, options) : null;
    if (!booking) throw bookingNotFound(bookingId);
    requireOwner(actor, booking.agent.id, 'booking');
    return booking;
  }

  private async liveBookingCount(em: EntityManager, agentId: string, now: Date): Promise<number> {
    return em.count(Booking, { agent: agentId, status: 'confirmed', liveUntil: { $gt: now } });
  }
}

function checkWindow(window: BookingWindow): void {
  // ajv's date-time accepts a leap second (23:59:60) that Date cannot represent.
  if (window.from && Number.isNaN(window.from.getTime())) throw AppError.validation({ from: 'must be a valid date-time' });
  if (window.to && Number.isNaN(window.to.getTime())) throw AppError.validation({ to: 'must be a valid date-time' });
  if (window.from && window.to && window.to < window.from) throw AppError.validation({ to: 'must be at or after from' });
}

/** A calendar question (`freeBusy`, `slots`): a valid window of at most `maxWindowDays`. */
function checkCalendarWindow(from: Date, to: Date): void {
  checkWindow({ from, to });
  if (to.getTime() - from.getTime() > FREE_BUSY_LIMITS.maxWindowDays * DAY_MS) {
    throw AppError.validation({ to: `must be at most ${FREE_BUSY_LIMITS.maxWindowDays} days after from` });
  }
}

function tooManySlots(): AppError {
  return AppError.validation({ to: `the window holds more than ${FREE_BUSY_LIMITS.maxBookedSlots} booked slots: ask for a shorter one` });
}

function bookingNotFound(bookingId: string): AppError {
  return new AppError('not_found', `no booking ${echo(bookingId)}`);
}


function capReached(cap: number, agentId?: string): AppError {
  const whose = agentId ? ` (agent ${agentId} holds that many)` : '';
  return new AppError('booking_cap_reached', `the free tier allows ${cap} live bookings${whose} (a series counts while any of its occurrences has not ended)`);
}

function versionMismatch(expected: number, current: number): AppError {
  return new AppError('version_mismatch', `the booking is at version ${current}, not ${expected}: read it again and retry`);
}

/** A writer that refused after it began to write raised REFUSAL_SQLSTATE with the reason as detail (all undone). */
function refusalRaised(error: unknown): AppError | undefined {
  const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
  return code === REFUSAL_SQLSTATE && typeof detail === 'string' ? refusalError(JSON.parse(detail) as Refusal) : undefined;
}


/**
 * Serialises one agent's calendar writes. Without it, many simultaneous inserts of one slot wait on
 * each other's exclusion-constraint checks until PostgreSQL's deadlock detector breaks them.
 */
export async function lockAgent(tx: EntityManager, agentId: string): Promise<void> {
  await tx.execute('select 1 from agents where id = ? for no key update', [agentId]);
}

/** Occurrences leave a series through the booking's own writer (sql/booking-exclude-occurrences.function.ts); answers the booking. */
async function excludeOccurrences(tx: EntityManager, bookingId: string, startsAt: readonly Date[]): Promise<BookingItem> {
  const [row] = await tx.execute<BookingRow[]>(
    `select ${bookingColumns()} from booking_exclude_occurrences(?, array(select jsonb_array_elements_text(?::jsonb)::timestamptz))`,
    [bookingId, JSON.stringify(startsAt.map((date) => date.toISOString()))],
  );
  return bookingItemOfRow(row!);
}

// Many slots travel as one JSON parameter (the ORM would spread a JS array into a value list).
function slotsJson(slots: readonly Slot[]): string {
  return JSON.stringify(slots.map((slot) => ({ starts_at: slot.startsAt.toISOString(), ends_at: slot.endsAt.toISOString() })));
}
