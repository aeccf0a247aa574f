import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { configuredLimit, LIMIT_SETTINGS } from '../../agents/index.js';

const pendingMax = configuredLimit(LIMIT_SETTINGS.pendingProposalsMax);

/**
 * At most PENDING_PROPOSALS_MAX pending proposals from one proposer to one target. The proposer's row
 * lock (which every proposal write of that agent takes) makes concurrent proposals count one after
 * the other, on the partial index of pending pairs.
 */
export const pendingProposalsLimitTrigger = sqlDefinition(
  'proposals_pending_per_target_limit',
  `
create or replace function proposals_pending_per_target_limit() returns trigger language plpgsql as $$
begin
  if new.status = 'pending' then
    perform 1 from agents where id = new.proposer_agent_id for no key update;
    if (select count(*) from (
          select 1 from proposals p
           where p.proposer_agent_id = new.proposer_agent_id and p.target_agent_id = new.target_agent_id and p.status = 'pending'
           limit ${pendingMax}) pending) >= ${pendingMax} then
      raise exception 'at most % pending proposals from one agent to one target', ${pendingMax}
        using errcode = 'check_violation', constraint = 'proposals_pending_per_target_limit';
    end if;
  end if;
  return new;
end;
$$;

create or replace trigger proposals_pending_per_target_limit before insert on proposals
  for each row execute function proposals_pending_per_target_limit();
`,
);
