import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A single booking moves whole (row and slots) to another agent. A writer (see booking_insert).
 */
export const bookingTransferFunction = sqlDefinition(
  'booking_transfer',
  `
create or replace function booking_transfer(p_booking uuid, p_to uuid) returns bookings language plpgsql as $$
declare
  v_booking bookings;
begin
  update bookings set agent_id = p_to where id = p_booking returning * into v_booking;
  update booking_slots set agent_id = p_to where booking_id = p_booking;
  return v_booking;
end
$$;
`,
);
