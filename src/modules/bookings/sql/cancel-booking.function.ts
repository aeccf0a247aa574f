import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Cancels one of the agent's bookings under its row lock and records booking.cancelled; cancelling a cancelled
 * booking answers it as it is.
 */
export const cancelBookingFunction = sqlDefinition(
  'cancel_booking',
  `
create or replace function cancel_booking(p_agent uuid, p_booking uuid, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_booking bookings;
begin
  perform 1 from agents where id = p_agent for no key update;
  v_booking := booking_cancel(p_booking, p_agent, p_at);
  if v_booking.id is null then
    select * into v_booking from bookings where id = p_booking;
    if not found then return '{"missing": true}'::jsonb; end if;
    if v_booking.agent_id <> p_agent then return '{"forbidden": true}'::jsonb; end if;
    return jsonb_build_object('booking', booking_item(v_booking));
  end if;
  return jsonb_build_object('booking', booking_item(v_booking),
                            'events', jsonb_build_array(record_booking_event(p_agent, 'booking.cancelled', v_booking, p_at)));
end
$$;
`,
);
