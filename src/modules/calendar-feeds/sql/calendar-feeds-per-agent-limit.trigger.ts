import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** Feed tokens per agent; the next is refused (limit_exceeded). */
export const MAX_CALENDAR_FEEDS_PER_AGENT = 10;

/** Counted under the agent's row lock, so simultaneous creates cannot pass the limit together. */
export const calendarFeedsPerAgentLimitTrigger = sqlDefinition(
  'calendar_feeds_per_agent_limit',
  `
create or replace function calendar_feeds_per_agent_limit() returns trigger language plpgsql as $$
begin
  perform 1 from agents where id = new.agent_id for no key update;
  if (select count(*) from calendar_feeds where agent_id = new.agent_id) >= ${MAX_CALENDAR_FEEDS_PER_AGENT} then
    raise exception 'an agent has at most ${MAX_CALENDAR_FEEDS_PER_AGENT} calendar feeds'
      using errcode = 'check_violation', constraint = 'calendar_feeds_per_agent_limit';
  end if;
  return new;
end;
$$;

create or replace trigger calendar_feeds_per_agent_limit before insert on calendar_feeds
  for each row execute function calendar_feeds_per_agent_limit();
`,
);
