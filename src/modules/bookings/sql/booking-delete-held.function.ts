import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** A released hold's held bookings go (never having been bookings, they leave no row behind). A writer (see booking_insert). */
export const bookingDeleteHeldFunction = sqlDefinition(
  'booking_delete_held',
  `
create or replace function booking_delete_held(p_hold uuid) returns int language plpgsql as $$
declare
  v_deleted int;
begin
  delete from bookings where hold_id = p_hold and status = 'held';
  get diagnostics v_deleted = row_count;
  return v_deleted;
end
$$;
`,
);
