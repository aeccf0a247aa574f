import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 27, what the booking aggregate holds for the scheduler:
 *
 * - Buffers held by the database: each slot's `blocked_from`/`blocked_until` is the slot widened by its agent's
 *   buffers when it was written (equal to the slot without buffers), and `booking_slots_no_overlap` now compares
 *   those ranges (same name, so a violation still answers `slot_taken`). Existing slots block exactly their range.
 *   A buffer change applies to bookings written afterwards. The end-order index for availability moves to the
 *   blocked range (what availability subtracts), with the hold a slot belongs to and its start (what daily and
 *   weekly limits count), so availability stays index-only.
 * - Holds: a hold is a row in `holds` (holder, range, expiry, the calendars it spans); each calendar's held booking
 *   is a `bookings` row with status `held` and `hold_id`, whose slot (with `hold_id`) blocks like any other.
 * - `bookings.version`: raised by a trigger whenever the booking changes (bookings/sql/booking-version.trigger.ts);
 *   it starts at 1 plus the revisions the calendar feed counted so far (removed occurrences, a cancellation), so the
 *   feed's SEQUENCE, now the version, never goes down.
 * - `booking.rescheduled` events, with the range before the move in `booking_events.previous`.
 */
export class Migration20261126120000_buffers_holds_versions extends Migration {
  override up(): void {
    this.addSql(`
      create table holds (
        id uuid primary key,
        holder_agent_id uuid not null constraint holds_holder_agent_id_foreign references agents (id) on delete cascade,
        agent_ids uuid[] not null,
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        expires_at timestamptz not null,
        created_at timestamptz not null,
        confirmed_at timestamptz null,
        released_at timestamptz null,
        constraint holds_range_check check (ends_at > starts_at),
        constraint holds_calendars_check check (cardinality(agent_ids) >= 1),
        constraint holds_outcome_check check (confirmed_at is null or released_at is null)
      );`);
    this.addSql(`create index holds_holder_idx on holds (holder_agent_id, created_at desc, id desc);`);

    this.addSql(`alter table bookings add column hold_id uuid null constraint bookings_hold_id_foreign references holds (id) on delete set null;`);
    this.addSql(`alter table bookings drop constraint bookings_status_check;`);
    this.addSql(`alter table bookings add constraint bookings_status_check check (status in ('confirmed', 'cancelled', 'held'));`);
    // A held booking belongs to a hold; a confirmed one keeps the hold it came from.
    this.addSql(`alter table bookings add constraint bookings_held_check check (status <> 'held' or hold_id is not null);`);
    this.addSql(`alter table bookings add column version integer not null default 1;`);
    this.addSql(`update bookings set version = 1 + jsonb_array_length(exdates) + (status = 'cancelled')::int;`);
    this.addSql(`create index bookings_hold_idx on bookings (hold_id) where hold_id is not null;`);

    this.addSql(`alter table booking_slots add column blocked_from timestamptz, add column blocked_until timestamptz, add column hold_id uuid null;`);
    this.addSql(`update booking_slots set blocked_from = starts_at, blocked_until = ends_at;`);
    this.addSql(`alter table booking_slots alter column blocked_from set not null, alter column blocked_until set not null;`);
    this.addSql(`alter table booking_slots add constraint booking_slots_blocked_check check (blocked_from <= starts_at and blocked_until >= ends_at);`);
    this.addSql(`alter table booking_slots drop constraint booking_slots_no_overlap;`);
    this.addSql(`
      alter table booking_slots add constraint booking_slots_no_overlap
        exclude using gist (agent_id with =, tstzrange(blocked_from, blocked_until, '[)') with &&);`);
    this.addSql(`drop index booking_slots_agent_ends_idx;`);
    this.addSql(`create index booking_slots_agent_blocked_idx on booking_slots (agent_id, blocked_until) include (blocked_from, hold_id, starts_at);`);

    this.addSql(`alter table booking_events drop constraint booking_events_type_check;`);
    this.addSql(`
      alter table booking_events add constraint booking_events_type_check
        check (type in ('booking.created', 'booking.cancelled', 'booking.transferred', 'booking.reminder', 'booking.rescheduled'));`);
    this.addSql(`alter table booking_events add column previous jsonb null;`);

    // New signatures (their definitions are applied after the migrations).
    this.addSql('drop function if exists booking_insert(uuid, uuid, timestamptz, timestamptz, text, timestamptz, jsonb);');
    this.addSql('drop function if exists booking_extend_series(uuid, jsonb);');
    this.addSql('drop function if exists record_booking_event(uuid, text, bookings, timestamptz);');
    this.addSql('drop function if exists claim_webhook_deliveries(timestamptz, timestamptz, int, uuid, uuid[], uuid[], int);');
  }
}
