import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { bookingItemSql } from '../booking.shape.js';

/**
 * A booking in the seed's BookingItem shape (booking.shape.ts writes the text): the `data.booking` of every
 * event and what the SQL writers answer, so JSON written here and a row mapped in JS are the same item.
 */
export const bookingItemFunction = sqlDefinition(
  'booking_item',
  `
create or replace function booking_item(b bookings) returns jsonb language sql stable as $$
  select ${bookingItemSql('b')};
$$;
`,
);
