import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Soft-cancel of the owner's confirmed booking, its slots freed. A writer (see booking_insert).
 */
export const bookingCancelFunction = sqlDefinition(
  'booking_cancel',
  `
create or replace function booking_cancel(p_booking uuid, p_owner uuid, p_at timestamptz) returns bookings language plpgsql as $$
declare
  v_booking bookings;
begin
  update bookings set status = 'cancelled', cancelled_at = p_at
   where id = p_booking and agent_id = p_owner and status = 'confirmed'
  returning * into v_booking;
  if found then
    delete from booking_slots where booking_id = p_booking;
  end if;
  return v_booking;
end
$$;
`,
);
