import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A booking (single or series) takes a new range: its first occurrence, rule and EXDATEs as given, and exactly the
 * given slots, each blocking its range widened by the agent's buffers as they are now; `live_until` from the slots.
 * The id stays; the version trigger raises the version. A writer (see booking_insert): the caller holds the agent's
 * row lock, has purged expired holds and checked the rules.
 */
export const bookingMoveFunction = sqlDefinition(
  'booking_move',
  `
create or replace function booking_move(p_booking uuid, p_starts_at timestamptz, p_ends_at timestamptz, p_rrule text, p_exdates jsonb,
                                        p_slots jsonb)
returns bookings language plpgsql as $$
declare
  v_booking bookings;
  v_before interval;
  v_after interval;
begin
  select coalesce(make_interval(mins => r.buffer_before_minutes), interval '0'), coalesce(make_interval(mins => r.buffer_after_minutes), interval '0')
    into v_before, v_after
    from bookings b left join availability_rules r on r.agent_id = b.agent_id where b.id = p_booking;
  delete from booking_slots where booking_id = p_booking;
  update bookings
     set starts_at = p_starts_at, ends_at = p_ends_at, rrule = p_rrule, exdates = p_exdates,
         live_until = (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz))
   where id = p_booking
  returning * into v_booking;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
  select p_booking, v_booking.agent_id, s.starts_at, s.ends_at, s.starts_at - v_before, s.ends_at + v_after
    from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
  return v_booking;
end
$$;
`,
);
