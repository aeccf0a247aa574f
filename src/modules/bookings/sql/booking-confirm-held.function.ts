import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** A held booking becomes a confirmed one with the same id; its slot no longer belongs to the hold. A writer (see booking_insert). */
export const bookingConfirmHeldFunction = sqlDefinition(
  'booking_confirm_held',
  `
create or replace function booking_confirm_held(p_booking uuid) returns bookings language plpgsql as $$
declare
  v_booking bookings;
begin
  update bookings set status = 'confirmed' where id = p_booking and status = 'held' returning * into v_booking;
  update booking_slots set hold_id = null where booking_id = p_booking;
  return v_booking;
end
$$;
`,
);
