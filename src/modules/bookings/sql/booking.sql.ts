import { namedStatement } from '../../../platform/db/statements.js';
import { bookingColumns, type BookingItem, type BookingRow } from '../booking.shape.js';
import type { StoredOutcome } from '../idempotency.js';
import type { WrittenEvents } from '../committed-events.js';

const BOOKING_COLUMNS = bookingColumns();

/** What `create_booking` answers: the booking and the event it wrote, or why nothing was written. */
export type CreateBookingOutcome =
  | ({ booking: BookingItem } & WrittenEvents)
  | { replay: StoredOutcome<BookingItem> }
  | { refused: 'booking_cap_reached' }
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

/** The agent's slots overlapping [from, to) through the exclusion constraint's range index (`freeBusy`). */
export const SLOTS_IN_WINDOW = namedStatement<[agentId: string, from: Date, to: Date, limit: number], { starts_at: Date | string; ends_at: Date | string }>(
  'slots_in_window',
  `select starts_at, ends_at from booking_slots
    where agent_id = $1 and tstzrange(starts_at, ends_at, '[)') && tstzrange($2::timestamptz, $3::timestamptz, '[)')
    order by starts_at
    limit $4`,
  { servedByReplica: true },
);

/**
 * The live occurrences (slots) inside [from, to) with the booking each belongs to, found through the
 * exclusion constraint's range index as `freeBusy` is; one row past the bound says the window is too full.
 */
export const BOOKED_SLOTS = namedStatement<
  [agentId: string, from: Date, to: Date, limit: number],
  BookingRow & { slot_starts_at: Date | string; slot_ends_at: Date | string }
>(
  'booked_slots',
  `select s.starts_at as slot_starts_at, s.ends_at as slot_ends_at, ${bookingColumns('b')}
     from booking_slots s join bookings b on b.id = s.booking_id
    where s.agent_id = $1 and tstzrange(s.starts_at, s.ends_at, '[)') && tstzrange($2::timestamptz, $3::timestamptz, '[)')
    order by s.starts_at, s.booking_id
    limit $4`,
  { servedByReplica: true },
);

/**
 * A window with a lower edge: the bookings overlapping [from, to), found through the range index so
 * the cost follows the window, not the agent's past (the (agent, starts_at) index would walk every
 * earlier booking and filter on ends_at). Materialised so the planner cannot trade it for that walk.
 */
export const BOOKINGS_OVERLAPPING = namedStatement<
  [agentId: string, from: Date, to: Date | null, afterStartsAt: Date | null, afterId: string | null, limit: number],
  BookingRow
>(
  'bookings_overlapping',
  `with window_rows as materialized (
     select ${BOOKING_COLUMNS} from bookings
      where agent_id = $1 and tstzrange(starts_at, ends_at, '[)') && tstzrange($2::timestamptz, $3::timestamptz, '[)')
   )
   select * from window_rows
    where $4::timestamptz is null or (starts_at, id) > ($4::timestamptz, $5::uuid)
    order by starts_at, id
    limit $6`,
  { servedByReplica: true },
);

/**
 * No lower edge: the calendar from its first booking, in (starts_at, id) order, stopping at the limit.
 * Absent bounds become infinities rather than `$n is null or …`, so that a generic plan still starts
 * the index scan at the cursor instead of the agent's first booking.
 */
export const BOOKINGS_FROM_START = namedStatement<
  [agentId: string, to: Date | null, afterStartsAt: Date | null, afterId: string | null, limit: number],
  BookingRow
>(
  'bookings_from_start',
  `select ${BOOKING_COLUMNS} from bookings
    where agent_id = $1
      and starts_at < coalesce($2::timestamptz, 'infinity')
      and (starts_at, id) > (coalesce($3::timestamptz, '-infinity'), coalesce($4::uuid, '00000000-0000-0000-0000-000000000000'))
    order by starts_at, id
    limit $5`,
  { servedByReplica: true },
);

/** A planned booking's occurrences, as `previewBooking` checks them against the calendar. */
const PLANNED_OCCURRENCES = `jsonb_to_recordset($2::jsonb) as o(starts_at timestamptz, ends_at timestamptz)`;
const OVERLAPS_OCCURRENCE = `s.agent_id = $1 and tstzrange(s.starts_at, s.ends_at, '[)') && tstzrange(o.starts_at, o.ends_at, '[)')`;

/** The planned occurrences that some slot of the agent overlaps (at most one row per occurrence). */
export const CLASHING_OCCURRENCES = namedStatement<[agentId: string, occurrences: string], { starts_at: Date; ends_at: Date }>(
  'clashing_occurrences',
  `select o.starts_at, o.ends_at from ${PLANNED_OCCURRENCES}
    where exists (select 1 from booking_slots s where ${OVERLAPS_OCCURRENCE})
    order by o.starts_at`,
);

/**
 * The agent's bookings that overlap any planned occurrence, earliest first, stopping at the limit: a
 * long series over a busy calendar can touch hundreds of bookings, and the answer lists only the first.
 */
export const CONFLICTING_BOOKINGS = namedStatement<[agentId: string, occurrences: string, limit: number], BookingRow>(
  'conflicting_bookings',
  `select ${BOOKING_COLUMNS} from bookings
    where id in (select s.booking_id from ${PLANNED_OCCURRENCES} join booking_slots s on ${OVERLAPS_OCCURRENCE})
    order by starts_at, id
    limit $3`,
);

/** Confirmed bookings whose reminder is due (the sweep), over the partial `bookings_reminder_due_idx`. */
export const DUE_REMINDERS = namedStatement<[now: Date, dueBy: Date, limit: number], { id: string }>(
  'due_reminders',
  `select id from bookings
    where status = 'confirmed' and warning_sent_at is null and starts_at > $1::timestamptz and starts_at <= $2::timestamptz
    order by starts_at
    limit $3`,
);
