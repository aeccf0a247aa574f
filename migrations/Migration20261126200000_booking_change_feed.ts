import { Migration } from '@mikro-orm/migrations';

/**
 * The change feed (issue 28): booking events are kept BOOKING_EVENTS_RETENTION_DAYS, and a cursor from
 * before what is kept must answer `cursor_expired` rather than silently skip what was deleted.
 *
 * - `booking_events_pruned`: per agent, the newest event id the retention job deleted. A cursor is
 *   expired for an agent when an event of that agent after it was deleted (`through > since`), so an
 *   agent that has been quiet longer than the retention keeps a valid cursor: nothing of its was lost.
 *   Written only by `prune_booking_events` (booking-events/sql).
 * - `webhook_deliveries_event_idx`: deleting an event deletes its deliveries (`on delete cascade`);
 *   without an index each deleted event would scan every delivery. It also lets the job keep an event
 *   whose delivery is still pending. One more index entry per delivery, none on the booking write path.
 * - `claim_webhook_deliveries` now also answers the previous cursor of each delivery's endpoint (the
 *   `webhook-previous-cursor` header): its result type changes, so the old function goes first and its
 *   current definition (webhooks/sql) is applied after the migrations.
 */
export class Migration20261126200000_booking_change_feed extends Migration {
  override up(): void {
    this.addSql(`
      create table booking_events_pruned (
        agent_id uuid primary key constraint booking_events_pruned_agent_id_foreign references agents (id) on delete cascade,
        through bigint not null,
        pruned_at timestamptz not null
      );`);
    this.addSql(`create index webhook_deliveries_event_idx on webhook_deliveries (event_id);`);
    this.addSql(`drop function if exists claim_webhook_deliveries(timestamptz, timestamptz, int, uuid, uuid[], uuid[], int);`);
  }
}
