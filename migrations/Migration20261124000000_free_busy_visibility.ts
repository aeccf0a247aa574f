import { Migration } from '@mikro-orm/migrations';

/**
 * Who may ask for an agent's free/busy (`availability`, `proposeFirstAvailable`), as the agent sets it:
 * `family` (the default) is the agent itself, its parent and its children; `anyone` is every agent;
 * `nobody` is the agent itself only. The CHECK below holds this list; adding a value takes a new
 * migration, not an edit here.
 */
export const FREE_BUSY_VISIBILITIES = ['family', 'anyone', 'nobody'] as const;

/**
 * A per-agent setting for sharing free/busy across agents. A constant default adds the column
 * without rewriting `agents` (PostgreSQL 11+); every existing agent keeps the family-only rule.
 * Changing the setting updates the row, so `agents_credential_changed` drops the cached credential
 * (which carries the setting) in every process.
 */
export class Migration20261124000000_free_busy_visibility extends Migration {
  override up(): void {
    this.addSql(`
      alter table agents
        add column free_busy_visibility varchar(16) not null default 'family'
          constraint agents_free_busy_visibility_check check (free_busy_visibility in (${FREE_BUSY_VISIBILITIES.map((value) => `'${value}'`).join(', ')}));`);
  }
}
