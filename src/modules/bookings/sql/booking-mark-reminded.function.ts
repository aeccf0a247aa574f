import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The reminder's mark, once, on a confirmed booking that has not started. A writer (see booking_insert).
 */
export const bookingMarkRemindedFunction = sqlDefinition(
  'booking_mark_reminded',
  `
create or replace function booking_mark_reminded(p_booking uuid, p_at timestamptz) returns bookings language plpgsql as $$
declare
  v_booking bookings;
begin
  update bookings set warning_sent_at = p_at
   where id = p_booking and status = 'confirmed' and warning_sent_at is null and starts_at > p_at
  returning * into v_booking;
  return v_booking;
end
$$;
`,
);
