import { Migration } from '@mikro-orm/migrations';

/**
 * The dispatcher's claim is planned on every call, for the rows there are.
 *
 * Found with pg_stat_statements under `npm run bench` (S5: 10 webhooks per agent): claims took 29 ms on
 * average while a backlog built up. Reproduced alone: a plan PostgreSQL cached while `webhook_deliveries`
 * held nothing took 3.6 s per claim once 40,000 deliveries were due, and 2.8 ms when planned for them.
 * The backlog swings between empty and tens of thousands in normal use, and it drained slowest exactly
 * when it was largest. Planning each call costs about 0.1 ms per claimed delivery in a steady state.
 */
export class Migration20261123020000_webhook_claim_plan extends Migration {
  override up(): void {
    this.addSql(
      `alter function claim_webhook_deliveries(timestamptz, timestamptz, int, uuid, uuid[], uuid[], int) set plan_cache_mode = force_custom_plan;`,
    );
  }
}
