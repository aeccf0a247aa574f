import { Migration } from '@mikro-orm/migrations';

/**
 * Functions and triggers now have one home each, in the module that owns them (`src/modules/<concept>/sql/*.function.ts`,
 * `*.trigger.ts`), applied after the migrations whenever their text changes (platform/db/sql-definitions.ts). The four
 * trigger functions MikroORM had named `<table>_<trigger>_fn` get plain names there; the old ones go here, with the
 * triggers that call them, which their definitions create again under the same trigger names.
 */
export class Migration20261126010000_sql_definitions extends Migration {
  override up(): void {
    this.addSql('drop function agents_agents_credential_changed_fn() cascade;');
    this.addSql('drop function webhooks_webhooks_per_agent_limit_fn() cascade;');
    this.addSql('drop function calendar_feeds_calendar_feeds_per_agent_limit_fn() cascade;');
    this.addSql('drop function votes_votes_maintain_counts_fn() cascade;');
  }
}
