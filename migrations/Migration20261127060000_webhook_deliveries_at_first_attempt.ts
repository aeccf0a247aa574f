import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 26, S5: a delivery's row is written with the outcome of its first attempt, not before it.
 *
 * A delivery used to be written four times before its first attempt was on record: inserted by the fan-out
 * (four index entries), locked and leased by the claim (a lock record, then a non-HOT update: four index entries
 * again), updated by the record (three more), and its attempt inserted. With ten endpoints per agent that was 27
 * B-tree insertions and 8 row locks per create in S5's WAL (`BENCH_SQL_STATS=1`), and the fan-out counted the due
 * deliveries first (12 ms a call).
 *
 * Now the dispatcher's claim leases queued events (`webhook_fanout.leased_until`, a HOT update) and answers one
 * row per matching endpoint with the delivery's id, `webhook_delivery_id(event, endpoint)`; the record inserts the
 * delivery with its outcome (an upsert: a retry updates the row its first attempt wrote) and deletes the queued
 * event once every endpoint of it has its delivery. An event whose process died before it got there is leased
 * again when the lease ends and sent to the endpoints still without a delivery (the id is the same for the same
 * event and endpoint); one whose outcome the first process records after that is sent twice, as at-least-once
 * delivery allows. Deliveries that wait (retries, redeliveries, an endpoint busy in this
 * process) are rows as before and claimed as before.
 *
 * During a rolling upgrade, processes of the previous version find no fan-out function (an error logged each
 * pass) and cannot record what they claim: those deliveries are sent again when their lease ends.
 */
export class Migration20261127060000_webhook_deliveries_at_first_attempt extends Migration {
  override up(): void {
    this.addSql('alter table webhook_fanout add column leased_until timestamptz;');
    // How many deliveries the event brings, as its writer counted its endpoints: the claim takes events for its places by it.
    // The default serves the writers of the old version until the new record_booking_event is applied. The backfill
    // counts every endpoint that takes the type (webhook_takes_event comes after the migrations): at most too many,
    // which only makes a claim take fewer events.
    this.addSql('alter table webhook_fanout add column deliveries int not null default 1;');
    this.addSql(`
      update webhook_fanout f
         set deliveries = greatest(1, (select count(*) from booking_events e join webhooks w on w.agent_id = e.agent_id and e.type = any (w.events)
                                        where e.id = f.event_id));`);
    this.addSql('drop function if exists fan_out_webhook_events(timestamptz, uuid[], int, int);');
    // Its answer gains a column.
    this.addSql('drop function if exists claim_webhook_deliveries(timestamptz, timestamptz, int, uuid, uuid[], uuid[], int);');
  }
}
