import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { BOOKING_FIELDS } from '../booking.shape.js';

/** What a booking's version counts: a change of any field of its shape, or of its removed occurrences. */
const VERSIONED_COLUMNS = [...BOOKING_FIELDS.map((field) => field.column).filter((column) => column !== 'version'), 'exdates'];
const row = (alias: string) => `(${VERSIONED_COLUMNS.map((column) => `${alias}.${column}`).join(', ')})`;

/**
 * Raises `bookings.version` whenever a writer changes the booking as anyone sees it (its item, or its series'
 * EXDATEs), whichever writer it is: reschedule's optimistic concurrency (expectedVersion, If-Match) and the
 * calendar feed's SEQUENCE rest on it.
 */
export const bookingVersionTrigger = sqlDefinition(
  'booking_version',
  `
create or replace function booking_version() returns trigger language plpgsql as $$
begin
  new.version := old.version + 1;
  return new;
end;
$$;

create or replace trigger bookings_version before update on bookings
  for each row
  when (${row('old')} is distinct from ${row('new')})
  execute function booking_version();
`,
);
