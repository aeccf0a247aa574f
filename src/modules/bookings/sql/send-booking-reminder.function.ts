import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The reminder of one booking, once: under its agent's row lock (every calendar write takes it first), the mark
 * (booking_mark_reminded) and the booking.reminder event, in one transaction. Answers `{booking, events}`, or null
 * when there is nothing to remind (no such booking, cancelled, started, or reminded already).
 */
export const sendBookingReminderFunction = sqlDefinition(
  'send_booking_reminder',
  `
create or replace function send_booking_reminder(p_booking uuid, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_agent uuid;
  v_booking bookings;
begin
  loop
    select agent_id into v_agent from bookings where id = p_booking;
    if not found then return null; end if;
    perform 1 from agents where id = v_agent for no key update;
    -- A transfer may have moved the booking while this waited for the lock: then lock its new owner.
    exit when (select agent_id from bookings where id = p_booking) = v_agent;
  end loop;
  v_booking := booking_mark_reminded(p_booking, p_at);
  if v_booking.id is null then return null; end if;
  return jsonb_build_object('booking', booking_item(v_booking),
                            'events', jsonb_build_array(record_booking_event(v_agent, 'booking.reminder', v_booking, p_at)));
end
$$;
`,
);
