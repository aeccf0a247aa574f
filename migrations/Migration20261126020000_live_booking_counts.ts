import { Migration } from '@mikro-orm/migrations';

/**
 * The booking cap without counting every live booking on every create: per agent, the number of
 * confirmed bookings whose `live_until` lies after a watermark (`counted_after`), kept exact by a
 * trigger on `bookings` (bookings/sql/count-live-bookings.trigger.ts). Bookings end with time and no
 * write tells the count, so it is an upper bound of the live ones; `create_booking` trusts it while
 * it is under the cap and counts afresh (moving the watermark to now) only when it is not. A row is
 * made by that first count, never by the trigger, so agents need no backfill here.
 */
export class Migration20261126020000_live_booking_counts extends Migration {
  override up(): void {
    this.addSql(`
      create table agent_live_bookings (
        agent_id uuid primary key references agents (id) on delete cascade,
        counted_after timestamptz not null,
        live integer not null constraint agent_live_bookings_live_check check (live >= 0)
      );`);
  }
}
