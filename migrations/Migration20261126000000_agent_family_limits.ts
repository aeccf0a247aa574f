import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 24: one agent made 300 child agents in 2.6 s, each with its own booking cap, and 400 pending
 * proposals to one target.
 *
 * - `agents.root_id`: the family (a root and all its descendants) each agent belongs to, filled by a
 *   trigger from the parent; `agent_families` counts each family's members, and a trigger refuses the
 *   agent that would pass AGENT_FAMILY_MAX (`agents_family_limit`). Every agent descends from the one
 *   bootstrap agent today, so the family is the installation; the rule does not depend on that.
 * - A trigger refuses the pending proposal that would pass PENDING_PROPOSALS_MAX from one proposer to
 *   one target (`proposals_pending_per_target_limit`), counted on a partial index of pending pairs.
 * - The rate of creations (AGENT_CREATE_PER_MIN) is the rate limiter's, not the schema's.
 *
 * The functions and triggers are defined in src/modules/agents/sql and src/modules/proposals/sql.
 */
export class Migration20261126000000_agent_family_limits extends Migration {
  override up(): void {
    this.addSql(`alter table agents add column root_id uuid null;`);
    this.addSql(`
      with recursive family (id, root_id) as (
        select id, id from agents where parent_id is null
        union all
        select child.id, family.root_id from agents child join family on child.parent_id = family.id
      )
      update agents a set root_id = family.root_id from family where family.id = a.id;`);
    // A check rather than NOT NULL: to the ORM the column is optional, so that it leaves it out of its
    // inserts for the trigger to fill (it would refuse to flush an agent without it).
    this.addSql(`alter table agents add constraint agents_root_id_check check (root_id is not null);`);
    this.addSql(`alter table agents add constraint agents_root_id_foreign foreign key (root_id) references agents (id) on delete restrict;`);

    this.addSql(`
      create table agent_families (
        root_id uuid primary key constraint agent_families_root_id_foreign references agents (id) on update cascade on delete cascade,
        members int not null constraint agent_families_members_check check (members >= 1)
      );`);
    this.addSql(`insert into agent_families (root_id, members) select root_id, count(*) from agents group by root_id;`);
    this.addSql(`create index proposals_pending_pair_idx on proposals (proposer_agent_id, target_agent_id) where status = 'pending';`);
  }
}
