import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 27, availability across agents with rules (bench S13): working time is now read by common_working_ranges, the
 * working time common to several agents in one multirange, which intersects the agents of one zone on the wall clock
 * before their hours become instants (availability-rules/sql/common-working-ranges.function.ts). The per-agent
 * working_ranges_of it replaces goes; its callers (agent_working_ranges, the availability statement) are re-defined
 * after the migrations.
 */
export class Migration20261127050000_common_working_time extends Migration {
  override up(): void {
    this.addSql('drop function if exists working_ranges_of(availability_rules[], timestamptz, timestamptz);');
  }
}
