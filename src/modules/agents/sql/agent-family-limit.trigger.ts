import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { configuredLimit, LIMIT_SETTINGS } from './configured-limit.function.js';

const familyMax = configuredLimit(LIMIT_SETTINGS.agentFamilyMax);

/**
 * Once per statement, over the rows it inserted: each family's counter row is updated in the
 * transaction of the insert, so its row lock makes concurrent creations in one family count one after
 * the other, and a refused or rolled-back insert takes its increment with it. (Once per row, a bulk
 * insert updated the same row once per agent, and each update walked the versions the transaction
 * had left before it: 9,999 agents in one statement took 8.8 s; once per statement, 1.1 s.)
 */
export const agentFamilyLimitTrigger = sqlDefinition(
  'agents_family_limit',
  `
create or replace function agents_family_limit() returns trigger language plpgsql as $$
begin
  insert into agent_families as f (root_id, members)
  select root_id, count(*) from inserted group by root_id
    on conflict (root_id) do update set members = f.members + excluded.members;
  if exists (select 1 from agent_families f where f.root_id in (select root_id from inserted) and f.members > ${familyMax}) then
    raise exception 'a family holds at most % agents', ${familyMax}
      using errcode = 'check_violation', constraint = 'agents_family_limit';
  end if;
  return null;
end;
$$;

create or replace trigger agents_family_limit after insert on agents referencing new table as inserted
  for each statement execute function agents_family_limit();
`,
);
