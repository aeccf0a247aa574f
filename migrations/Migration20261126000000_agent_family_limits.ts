import { Migration } from '@mikro-orm/migrations';

/**
 * The limits are configuration (AGENT_FAMILY_MAX, PENDING_PROPOSALS_MAX in config.ts); the triggers
 * below read them from these transaction-local settings, which the services set in the transaction
 * of the write. A writer that sets none (psql, a seeding script) gets the contract's default.
 */
export const LIMIT_SETTINGS = {
  agentFamilyMax: { name: 'gateway.agent_family_max', contractDefault: 10_000 },
  pendingProposalsMax: { name: 'gateway.pending_proposals_max', contractDefault: 50 },
} as const;

const limit = (setting: { name: string; contractDefault: number }) => `gateway_limit('${setting.name}', ${setting.contractDefault})`;

/**
 * Kept identical to the `@Trigger`s on the Agent entity (MikroORM compares trigger bodies). A new
 * agent's family is its parent's (the root is its own); whatever a writer sends is overwritten.
 */
export const AGENTS_FAMILY_ROOT_BODY = `
  new.root_id := case when new.parent_id is null then new.id
                      else coalesce((select a.root_id from agents a where a.id = new.parent_id), new.parent_id) end;
  return new;
`;

/**
 * Once per statement, over the rows it inserted: each family's counter row is updated in the
 * transaction of the insert, so its row lock makes concurrent creations in one family count one after
 * the other, and a refused or rolled-back insert takes its increment with it. (Once per row, a bulk
 * insert updated the same row once per agent, and each update walked the versions the transaction
 * had left before it: 9,999 agents in one statement took 8.8 s.)
 */
export const AGENTS_FAMILY_LIMIT_BODY = `
  insert into agent_families as f (root_id, members)
  select root_id, count(*) from inserted group by root_id
    on conflict (root_id) do update set members = f.members + excluded.members;
  if exists (select 1 from agent_families f where f.root_id in (select root_id from inserted) and f.members > ${limit(LIMIT_SETTINGS.agentFamilyMax)}) then
    raise exception 'a family holds at most % agents', ${limit(LIMIT_SETTINGS.agentFamilyMax)}
      using errcode = 'check_violation', constraint = 'agents_family_limit';
  end if;
  return null;
`;

/** The statement-level trigger as MikroORM declares it (its `@Trigger` body form is per row only). */
export const AGENTS_FAMILY_LIMIT_TRIGGER =
  'create trigger agents_family_limit after insert on agents referencing new table as inserted for each statement execute function agents_family_limit_fn()';

/**
 * Kept identical to the `@Trigger` on the Proposal entity. The proposer's row lock (which every
 * proposal write of that agent takes) makes concurrent proposals count one after the other.
 */
export const PROPOSALS_PENDING_PER_TARGET_LIMIT_BODY = `
  if new.status = 'pending' then
    perform 1 from agents where id = new.proposer_agent_id for no key update;
    if (select count(*) from (
          select 1 from proposals p
           where p.proposer_agent_id = new.proposer_agent_id and p.target_agent_id = new.target_agent_id and p.status = 'pending'
           limit ${limit(LIMIT_SETTINGS.pendingProposalsMax)}) pending) >= ${limit(LIMIT_SETTINGS.pendingProposalsMax)} then
      raise exception 'at most % pending proposals from one agent to one target', ${limit(LIMIT_SETTINGS.pendingProposalsMax)}
        using errcode = 'check_violation', constraint = 'proposals_pending_per_target_limit';
    end if;
  end if;
  return new;
`;

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
 */
export class Migration20261126000000_agent_family_limits extends Migration {
  override up(): void {
    this.addSql(`
      create function gateway_limit(p_setting text, p_default int) returns int language sql stable as $$
        select coalesce(nullif(current_setting(p_setting, true), '')::int, p_default)
      $$;`);

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

    this.addSql(`create function agents_agents_family_root_fn() returns trigger language plpgsql as $$
begin${AGENTS_FAMILY_ROOT_BODY}end;
$$;`);
    this.addSql(`create trigger agents_family_root before insert on agents for each row execute function agents_agents_family_root_fn();`);
    this.addSql(`create function agents_family_limit_fn() returns trigger language plpgsql as $$
begin${AGENTS_FAMILY_LIMIT_BODY}end;
$$;`);
    this.addSql(`${AGENTS_FAMILY_LIMIT_TRIGGER};`);

    this.addSql(`create index proposals_pending_pair_idx on proposals (proposer_agent_id, target_agent_id) where status = 'pending';`);
    this.addSql(`create function proposals_proposals_pending_per_target_limit_fn() returns trigger language plpgsql as $$
begin${PROPOSALS_PENDING_PER_TARGET_LIMIT_BODY}end;
$$;`);
    this.addSql(`create trigger proposals_pending_per_target_limit before insert on proposals for each row execute function proposals_proposals_pending_per_target_limit_fn();`);
  }
}
