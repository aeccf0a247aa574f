import type { Actor } from '../../platform/auth/actor.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import { agentOf } from '../agents/index.js';
import { BOOKABLE_TIME } from '../bookings/index.js';
import { isUuid } from '../../platform/uuid.js';
import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import type { Slot } from '../bookings/index.js';
import { describeRefusal, type Refusal } from '../availability-rules/index.js';
import { checkRange } from '../bookings/index.js';
import { AVAILABILITY, SLOT_CHECK } from './sql/availability.sql.js';

/** What one availability question may ask; the GraphQL descriptions and `/openapi.json` state the same numbers. */
export const AVAILABILITY_LIMITS = {
  /** Agents besides the caller (the caller is always included). */
  maxOtherAgents: 20,
  /**
   * The window `[from, to)`. A month is what scheduling assistants look ahead, and it keeps one
   * question to a few thousand booked slots per agent.
   */
  maxWindowDays: 31,
  /** A slot's length, in minutes: 5 minutes to a day. */
  durationMin: 5,
  durationMax: 1_440,
  /** The step between candidate starts, in minutes: 5 minutes to a day. */
  granularityMin: 5,
  granularityMax: 1_440,
  granularityDefault: 15,
  /** Slots per page, as for the other lists. */
  firstDefault: SCHEDULING_LIMITS.pageDefault,
  firstMax: SCHEDULING_LIMITS.pageMax,
  /**
   * Booked slots inside the window, of all the agents asked (the caller included). About 1,600 a
   * day over a month: calendars this full would make one question scan without bound (some 80 ms
   * here at the bound); more is a validation error naming `to`.
   */
  maxBookedSlots: 50_000,
  /** Reasons one "why not this slot" answer lists, in the order writers refuse by. */
  maxReasons: 20,
} as const;

/** Why a slot cannot be taken: one reason of `checkSlot`, with the sentence an error would carry. */
export type SlotReason = Refusal & { message: string };

/** The answer to "why not this slot". */
export interface SlotCheck {
  agentId: string;
  startsAt: Date;
  endsAt: Date;
  /** Whether a booking of exactly this range by the caller would be admitted now (no reason). */
  available: boolean;
  reasons: SlotReason[];
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

export interface AvailabilityQuery {
  /** The other agents; the caller is always included. Duplicates and the caller's own id count once. */
  agentIds: readonly string[];
  durationMinutes: number;
  from: Date;
  to: Date;
  granularityMinutes: number;
  first: number;
  /** Slots starting after this instant (the cursor of the previous page's last slot). */
  after?: Date | undefined;
}

export interface AvailabilityPage {
  items: Slot[];
  hasNextPage: boolean;
}

const CURSOR_PREFIX = 'slot:';

/** A page position: the start of the last slot listed. Opaque to clients, the same in GraphQL, REST and MCP. */
export function encodeSlotCursor(slot: Slot): string {
  return Buffer.from(`${CURSOR_PREFIX}${slot.startsAt.toISOString()}`).toString('base64url');
}

export function decodeSlotCursor(cursor: string): Date {
  const text = Buffer.from(cursor, 'base64url').toString();
  const at = text.startsWith(CURSOR_PREFIX) ? new Date(text.slice(CURSOR_PREFIX.length)) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) throw AppError.validation({ after: 'is not a cursor from this list' });
  return at;
}

function isBetween(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

function validate(query: AvailabilityQuery): void {
  const fields: FieldErrors = {};
  const L = AVAILABILITY_LIMITS;
  if (query.agentIds.length > L.maxOtherAgents) fields.agentIds = `must name at most ${L.maxOtherAgents} agents besides the caller`;
  if (!isBetween(query.durationMinutes, L.durationMin, L.durationMax)) fields.duration = `must be a whole number of minutes from ${L.durationMin} to ${L.durationMax}`;
  if (!isBetween(query.granularityMinutes, L.granularityMin, L.granularityMax)) {
    fields.granularity = `must be a whole number of minutes from ${L.granularityMin} to ${L.granularityMax}`;
  }
  if (!isBetween(query.first, 1, L.firstMax)) fields.first = `must be an integer from 1 to ${L.firstMax}`;
  const outside = `must be from ${BOOKABLE_TIME.from.toISOString()} to ${BOOKABLE_TIME.before.toISOString()}`;
  if (Number.isNaN(query.from.getTime())) fields.from = 'must be an RFC 3339 date-time with a time-zone offset';
  else if (query.from < BOOKABLE_TIME.from || query.from > BOOKABLE_TIME.before) fields.from = outside;
  if (Number.isNaN(query.to.getTime())) fields.to = 'must be an RFC 3339 date-time with a time-zone offset';
  else if (query.to < BOOKABLE_TIME.from || query.to > BOOKABLE_TIME.before) fields.to = outside;
  else if (!fields.from && query.to <= query.from) fields.to = 'must be after from';
  else if (!fields.from && query.to.getTime() - query.from.getTime() > L.maxWindowDays * DAY_MS) fields.to = `must be at most ${L.maxWindowDays} days after from`;
  if (query.after && Number.isNaN(query.after.getTime())) fields.after = 'is not a cursor from this list';
  if (Object.keys(fields).length) throw AppError.validation(fields);
}

function refusedError(refused: number): AppError {
  // The same words for an agent that does not share and one that does not exist, and no id: nothing
  // about any calendar, not even which of the ids sent names an agent.
  const which = refused === 1 ? 'an agent' : `${refused} of the agents`;
  return new AppError('forbidden', `not allowed to see the free/busy of ${which} asked for: not shared with you, or no such agent`);
}

/**
 * Common free time of several agents' calendars. Busy is what the exclusion constraint sees
 * (`booking_slots`: confirmed bookings and their materialised occurrences; cancelled bookings and
 * cancelled occurrences free their time). Only free slots leave: no booking, id or metadata.
 */
export class AvailabilityService {
  constructor(
    private readonly statements: Statements,
    private readonly clock: Clock,
  ) {}

  /**
   * Free slots of `duration` minutes common to the caller and `agentIds` inside `[from, to)`, starting on
   * the `granularity` grid (multiples of it since 1970-01-01T00:00Z), earliest first. Every grid start
   * whose slot is free is listed, so consecutive slots overlap when the duration is longer than the step.
   * An agent that does not share its free/busy with the caller (or does not exist) is `forbidden`.
   */
  async find(caller: Actor, query: AvailabilityQuery): Promise<AvailabilityPage> {
    const actor = agentOf(caller);
    validate(query);
    // PostgreSQL answers uuids in lower case; an id may come in either.
    const others = [...new Set(query.agentIds.map((id) => id.toLowerCase()))].filter((id) => id !== actor.id);
    const malformed = others.filter((id) => !isUuid(id));
    if (malformed.length) throw refusedError(malformed.length);
    const step = query.granularityMinutes * MINUTE_MS;
    const earliest = Math.max(query.from.getTime(), query.after ? query.after.getTime() + 1 : Number.NEGATIVE_INFINITY);
    const gridStart = new Date(Math.ceil(earliest / step) * step);
    // A page past the window is empty, but still answers who may be asked.
    const windowEnd = new Date(Math.max(query.to.getTime(), gridStart.getTime()));
    const row = await this.statements.one(AVAILABILITY, [
      actor.id,
      others,
      gridStart,
      windowEnd,
      query.durationMinutes,
      query.granularityMinutes,
      query.first + 1,
      AVAILABILITY_LIMITS.maxBookedSlots,
      this.clock.now(),
    ]);
    if (row?.refused) throw refusedError(row.refused.length);
    if (row?.crowded) {
      throw AppError.validation({ to: `the agents asked hold more than ${AVAILABILITY_LIMITS.maxBookedSlots} booked slots inside the window: ask for a shorter one` });
    }
    const starts = row?.starts ?? [];
    const duration = query.durationMinutes * MINUTE_MS;
    const items = starts.slice(0, query.first).map((start) => ({ startsAt: new Date(start), endsAt: new Date(new Date(start).getTime() + duration) }));
    return { items, hasNextPage: starts.length > query.first };
  }

  /**
   * Why [startsAt, endsAt) cannot be taken on `agentId`'s calendar (the caller's when absent) by the caller: every
   * reason `slot_refusals` gives, as the writers would refuse (the booking or hold in the way, buffer, working hours,
   * notice, advance, limits). The same evaluation the writers and `find` use. A calendar the caller may not see (its
   * free/busy is not shared with it, or no such agent) is `forbidden`, as in `find`: the answer says nothing of it.
   */
  async checkSlot(caller: Actor, agentId: string | undefined, startsAt: Date, endsAt: Date): Promise<SlotCheck> {
    const actor = agentOf(caller);
    const fields: FieldErrors = {};
    checkRange(startsAt, endsAt, fields);
    if (Object.keys(fields).length) throw AppError.validation(fields);
    const subject = (agentId ?? actor.id).toLowerCase();
    if (!isUuid(subject)) throw refusedError(1);
    const row = await this.statements.one(SLOT_CHECK, [actor.id, subject, startsAt, endsAt, this.clock.now(), AVAILABILITY_LIMITS.maxReasons]);
    if (!row?.visible) throw refusedError(1);
    const reasons = (row.reasons ?? []).map((reason) => ({ ...reason, message: describeRefusal(reason) }));
    return { agentId: subject, startsAt, endsAt, available: reasons.length === 0, reasons };
  }

  /** The earliest free slot common to the caller and `agentId`, or null; `forbidden` as for `find`. */
  async firstCommonSlot(caller: Actor, agentId: string, query: Omit<AvailabilityQuery, 'agentIds' | 'first' | 'after'>): Promise<Slot | null> {
    const page = await this.find(caller, { ...query, agentIds: [agentId], first: 1 });
    return page.items[0] ?? null;
  }
}
