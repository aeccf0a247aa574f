import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** One agent's webhooks cannot multiply every write: registrations past this are refused (limit_exceeded). */
export const MAX_WEBHOOKS_PER_AGENT = 20;

/** Counted under the agent's row lock, so simultaneous registrations cannot pass the limit together. */
export const webhooksPerAgentLimitTrigger = sqlDefinition(
  'webhooks_per_agent_limit',
  `
create or replace function webhooks_per_agent_limit() returns trigger language plpgsql as $$
begin
  perform 1 from agents where id = new.agent_id for no key update;
  if (select count(*) from webhooks where agent_id = new.agent_id) >= ${MAX_WEBHOOKS_PER_AGENT} then
    raise exception 'an agent has at most ${MAX_WEBHOOKS_PER_AGENT} webhooks'
      using errcode = 'check_violation', constraint = 'webhooks_per_agent_limit';
  end if;
  return new;
end;
$$;

create or replace trigger webhooks_per_agent_limit before insert on webhooks
  for each row execute function webhooks_per_agent_limit();
`,
);
