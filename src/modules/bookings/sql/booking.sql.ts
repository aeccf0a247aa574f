import { namedStatement } from '../../../platform/db/statements.js';
import { bookingColumns, type BookingItem, type BookingProjection, type BookingRow } from '../booking.shape.js';
import type { Refusal } from '../../availability-rules/index.js';
import type { StoredOutcome } from '../idempotency.js';
import type { PreviousRange, WrittenEvents } from '../committed-events.js';

const BOOKING_COLUMNS = bookingColumns();

/** What `create_booking` answers: the booking and the event it wrote, or why nothing was written. */
export type CreateBookingOutcome =
  | ({ booking: BookingItem } & WrittenEvents)
  | { replay: StoredOutcome<BookingItem> }
  | { refused: Refusal }
  | { capReached: true }
  | { conflict: true };

/**
 * The whole create in one round trip (the `create_booking` function): about nine statements with the
 * ORM (lock, key lookup, cap count, insert, slots, key, event, begin, commit) become one.
 */
export const CREATE_BOOKING = namedStatement<
  [
    agentId: string,
    startsAt: Date,
    endsAt: Date,
    rrule: string | null,
    slots: string,
    cap: number,
    key: string | null,
    requestHash: string | null,
    keyValidAfter: Date,
    at: Date,
  ],
  { outcome: CreateBookingOutcome }
>(
  'create_booking',
  `select create_booking($1::uuid, $2::timestamptz, $3::timestamptz, $4::text, $5::jsonb, $6::int, $7::text, $8::text,
                         $9::timestamptz, $10::timestamptz) as outcome`,
);

/** What `create_group_booking` answers: one booking and one event per calendar, or why nothing was written. */
export type CreateGroupBookingOutcome =
  | ({ bookings: BookingItem[] } & WrittenEvents)
  | { replay: StoredOutcome<BookingItem[]> }
  | { forbidden: string[] }
  | { capReached: string }
  | { refused: Refusal }
  | { conflict: true };

/** A meeting on several calendars in one round trip (`create_group_booking`). */
export const CREATE_GROUP_BOOKING = namedStatement<
  [actorId: string, agentIds: string[], startsAt: Date, endsAt: Date, cap: number, key: string | null, requestHash: string | null, keyValidAfter: Date, at: Date],
  { outcome: CreateGroupBookingOutcome }
>(
  'create_group_booking',
  `select create_group_booking($1::uuid, $2::uuid[], $3::timestamptz, $4::timestamptz, $5::int, $6::text, $7::text, $8::timestamptz,
                               $9::timestamptz) as outcome`,
);

/** What `reschedule_booking` answers. */
export type RescheduleBookingOutcome =
  | { missing: true }
  | { forbidden: true }
  | { notConfirmed: string }
  | { versionMismatch: number }
  | { refused: Refusal }
  | ({ booking: BookingItem; previous: PreviousRange } & WrittenEvents);

/** A reschedule in one round trip (`reschedule_booking`), its slots planned by the service. */
export const RESCHEDULE_BOOKING = namedStatement<
  [
    actorId: string,
    bookingId: string,
    expectedVersion: number | null,
    scope: 'series' | 'occurrence' | 'following',
    occurrence: Date | null,
    startsAt: Date,
    endsAt: Date,
    rrule: string | null,
    exdates: string,
    slots: string,
    keptRrule: string | null,
    keptExdates: string | null,
    at: Date,
  ],
  { outcome: RescheduleBookingOutcome }
>(
  'reschedule_booking',
  `select reschedule_booking($1::uuid, $2::uuid, $3::int, $4::text, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::text, $9::jsonb,
                             $10::jsonb, $11::text, $12::jsonb, $13::timestamptz) as outcome`,
);

/** A booking as the reschedule plan needs it: its range, rule and removed occurrences, and its version. */
export const BOOKING_SERIES = namedStatement<
  [bookingId: string],
  BookingRow & { exdates: string[] }
>('booking_series', `select ${BOOKING_COLUMNS}, exdates from bookings where id = $1::uuid`);

/** What `cancel_booking` answers. */
export type CancelBookingOutcome = { missing: true } | { forbidden: true } | ({ booking: BookingItem } & Partial<WrittenEvents>);

/** Soft-cancel in one round trip (lock, conditional update, slots freed, event). */
export const CANCEL_BOOKING = namedStatement<[agentId: string, bookingId: string, at: Date], { outcome: CancelBookingOutcome }>(
  'cancel_booking',
  'select cancel_booking($1::uuid, $2::uuid, $3::timestamptz) as outcome',
);

/** The reminder of one booking in one round trip (`send_booking_reminder`): null when nothing is due. */
export const SEND_BOOKING_REMINDER = namedStatement<[bookingId: string, at: Date], { outcome: ({ booking: BookingItem } & WrittenEvents) | null }>(
  'send_booking_reminder',
  'select send_booking_reminder($1::uuid, $2::timestamptz) as outcome',
);

/** One booking by id, in the shape's columns. */
export const BOOKING_BY_ID = namedStatement<[bookingId: string], BookingRow>('booking_by_id', `select ${BOOKING_COLUMNS} from bookings where id = $1::uuid`);

/**
 * A slot of the agent `$1` overlapping `range` (an expression), through the exclusion constraint's GiST index: a slot's
 * blocked range contains it, so the index condition on the blocked range is followed by the slot's own.
 */
const slotOverlaps = (alias: string, range: string) =>
  `${alias}.agent_id = $1 and tstzrange(${alias}.blocked_from, ${alias}.blocked_until, '[)') && ${range} and tstzrange(${alias}.starts_at, ${alias}.ends_at, '[)') && ${range}`;

/**
 * The agent's live slots (bookings and live holds) overlapping [from, to) (`freeBusy`). A booking's slot is live
 * without asking `slot_is_live`, which PostgreSQL calls rather than inlines (a month of 500 slots: 6 → 2 ms).
 */
export const SLOTS_IN_WINDOW = namedStatement<[agentId: string, from: Date, to: Date, limit: number, now: Date], { starts_at: Date | string; ends_at: Date | string }>(
  'slots_in_window',
  `select s.starts_at, s.ends_at from booking_slots s
    where ${slotOverlaps('s', "tstzrange($2::timestamptz, $3::timestamptz, '[)')")} and (s.hold_id is null or slot_is_live(s.hold_id, $5::timestamptz))
    order by s.starts_at
    limit $4`,
  { servedByReplica: true },
);

/**
 * The live occurrences (slots) of bookings inside [from, to) with the booking each belongs to, found through the
 * exclusion constraint's range index as `freeBusy` is; one row past the bound says the window is too full. Holds
 * are not bookings yet: they have a list of their own.
 */
export const BOOKED_SLOTS = namedStatement<
  [agentId: string, from: Date, to: Date, limit: number],
  BookingRow & { slot_starts_at: Date | string; slot_ends_at: Date | string }
>(
  'booked_slots',
  `select s.starts_at as slot_starts_at, s.ends_at as slot_ends_at, ${bookingColumns('b')}
     from booking_slots s join bookings b on b.id = s.booking_id
    where ${slotOverlaps('s', "tstzrange($2::timestamptz, $3::timestamptz, '[)')")} and s.hold_id is null
    order by s.starts_at, s.booking_id
    limit $4`,
  { servedByReplica: true },
);

/**
 * A window with a lower edge: the bookings overlapping [from, to), found through the range index so
 * the cost follows the window, not the agent's past (the (agent, starts_at) index would walk every
 * earlier booking and filter on ends_at). Materialised so the planner cannot trade it for that walk.
 */
const bookingsOverlapping = (columns: string) => `with window_rows as materialized (
     select ${columns} from bookings
      where agent_id = $1 and tstzrange(starts_at, ends_at, '[)') && tstzrange($2::timestamptz, $3::timestamptz, '[)') and status <> 'held'
   )
   select * from window_rows
    where $4::timestamptz is null or (starts_at, id) > ($4::timestamptz, $5::uuid)
    order by starts_at, id
    limit $6`;
export const BOOKINGS_OVERLAPPING = namedStatement<
  [agentId: string, from: Date, to: Date | null, afterStartsAt: Date | null, afterId: string | null, limit: number],
  BookingRow
>('bookings_overlapping', bookingsOverlapping(BOOKING_COLUMNS), { servedByReplica: true });

/**
 * No lower edge: the calendar from its first booking, in (starts_at, id) order, stopping at the limit.
 * Absent bounds become infinities rather than `$n is null or …`, so that a generic plan still starts
 * the index scan at the cursor instead of the agent's first booking.
 */
const bookingsFromStart = (columns: string) => `select ${columns} from bookings
    where agent_id = $1 and status <> 'held'
      and starts_at < coalesce($2::timestamptz, 'infinity')
      and (starts_at, id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::uuid, '00000000-0000-0000-0000-000000000000'))
    order by starts_at, id
    limit $5`;
export const BOOKINGS_FROM_START = namedStatement<
  [agentId: string, to: Date | null, afterStartsAt: Date | null, afterId: string | null, limit: number],
  BookingRow
>('bookings_from_start', bookingsFromStart(BOOKING_COLUMNS), { servedByReplica: true });

// The page statements of other projections: the same texts with fewer columns, named by their projection.
const projectedPages = new Map<string, { overlapping: typeof BOOKINGS_OVERLAPPING; fromStart: typeof BOOKINGS_FROM_START }>();

/** The two page statements selecting the columns of `projection` (BOOKINGS_OVERLAPPING and BOOKINGS_FROM_START for every field). */
export function pageStatementsOf(projection: BookingProjection): { overlapping: typeof BOOKINGS_OVERLAPPING; fromStart: typeof BOOKINGS_FROM_START } {
  if (projection.key === '') return { overlapping: BOOKINGS_OVERLAPPING, fromStart: BOOKINGS_FROM_START };
  let statements = projectedPages.get(projection.key);
  if (!statements) {
    statements = {
      overlapping: { ...BOOKINGS_OVERLAPPING, name: `${BOOKINGS_OVERLAPPING.name}_${projection.key}`, text: bookingsOverlapping(projection.columns) },
      fromStart: { ...BOOKINGS_FROM_START, name: `${BOOKINGS_FROM_START.name}_${projection.key}`, text: bookingsFromStart(projection.columns) },
    };
    projectedPages.set(projection.key, statements);
  }
  return statements;
}

/**
 * A planned booking's occurrences, as `previewBooking` checks them against the calendar: each widened by the agent's
 * buffers (what it would block), against the live slots' blocked ranges, as the exclusion constraint compares them
 * (only held slots ask `slot_is_live`, as in SLOTS_IN_WINDOW).
 */
const PLANNED_OCCURRENCES = `jsonb_to_recordset($2::jsonb) as o(starts_at timestamptz, ends_at timestamptz)
   cross join (select make_interval(mins => coalesce(max(r.buffer_before_minutes), 0)) as before, make_interval(mins => coalesce(max(r.buffer_after_minutes), 0)) as after
                 from availability_rules r where r.agent_id = $1) buffers`;
const OVERLAPS_OCCURRENCE = `s.agent_id = $1 and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange(o.starts_at - buffers.before, o.ends_at + buffers.after, '[)')
   and (s.hold_id is null or slot_is_live(s.hold_id, $3::timestamptz))`;

/** The planned occurrences that some live slot of the agent is in the way of (at most one row per occurrence). */
export const CLASHING_OCCURRENCES = namedStatement<[agentId: string, occurrences: string, now: Date], { starts_at: Date; ends_at: Date }>(
  'clashing_occurrences',
  `select o.starts_at, o.ends_at from ${PLANNED_OCCURRENCES}
    where exists (select 1 from booking_slots s where ${OVERLAPS_OCCURRENCE})
    order by o.starts_at`,
);

/**
 * The agent's bookings in the way of any planned occurrence, earliest first, stopping at the limit: a long series over
 * a busy calendar can touch hundreds of bookings, and the answer lists only the first. Holds in the way clash
 * (CLASHING_OCCURRENCES) but are not bookings to list.
 */
export const CONFLICTING_BOOKINGS = namedStatement<[agentId: string, occurrences: string, now: Date, limit: number], BookingRow>(
  'conflicting_bookings',
  `select ${BOOKING_COLUMNS} from bookings
    where id in (select s.booking_id from ${PLANNED_OCCURRENCES} join booking_slots s on ${OVERLAPS_OCCURRENCE} and s.hold_id is null)
    order by starts_at, id
    limit $4`,
);

/** Confirmed bookings whose reminder is due (the sweep), over the partial `bookings_reminder_due_idx`. */
export const DUE_REMINDERS = namedStatement<[now: Date, dueBy: Date, limit: number], { id: string }>(
  'due_reminders',
  `select id from bookings
    where status = 'confirmed' and warning_sent_at is null and starts_at > $1::timestamptz and starts_at <= $2::timestamptz
    order by starts_at
    limit $3`,
);
