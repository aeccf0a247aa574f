import { Migration } from '@mikro-orm/migrations';

/**
 * One booking shape (issue 25 item 3): every event's `data.booking` is written by `booking_item()` from the row.
 * `record_booking_event` takes the row instead of a payload, and `create_booking` the booking's fields instead of
 * an item built in JavaScript; their new definitions (bookings/sql, booking-events/sql) are applied after this,
 * so the old signatures go here.
 */
export class Migration20261126100000_one_booking_shape extends Migration {
  override up(): void {
    this.addSql('drop function if exists create_booking(jsonb, jsonb, int, text, text, timestamptz, timestamptz);');
    this.addSql('drop function if exists record_booking_event(uuid, text, jsonb, timestamptz);');
  }
}
