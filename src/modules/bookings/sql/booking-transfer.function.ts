import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A single booking moves whole (row and slots) to another agent; its slot then blocks with the new owner's buffers.
 * A writer (see booking_insert).
 */
export const bookingTransferFunction = sqlDefinition(
  'booking_transfer',
  `
create or replace function booking_transfer(p_booking uuid, p_to uuid) returns bookings language plpgsql as $$
declare
  v_booking bookings;
  v_before interval;
  v_after interval;
begin
  select make_interval(mins => r.buffer_before_minutes), make_interval(mins => r.buffer_after_minutes)
    into v_before, v_after from availability_rules r where r.agent_id = p_to;
  update bookings set agent_id = p_to where id = p_booking returning * into v_booking;
  update booking_slots
     set agent_id = p_to, blocked_from = starts_at - coalesce(v_before, interval '0'), blocked_until = ends_at + coalesce(v_after, interval '0')
   where booking_id = p_booking;
  return v_booking;
end
$$;
`,
);
