import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** A new agent's family is its parent's (a root is its own); whatever a writer sends is overwritten. */
export const agentFamilyRootTrigger = sqlDefinition(
  'agent_family_root',
  `
create or replace function agent_family_root() returns trigger language plpgsql as $$
begin
  new.root_id := case when new.parent_id is null then new.id
                      else coalesce((select a.root_id from agents a where a.id = new.parent_id), new.parent_id) end;
  return new;
end;
$$;

create or replace trigger agents_family_root before insert on agents
  for each row execute function agent_family_root();
`,
);
