import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** `vote_count` equals the vote rows, and trending's per-day counters follow, in the voting transaction. */
export const votesMaintainCountsTrigger = sqlDefinition(
  'votes_maintain_counts',
  `
create or replace function votes_maintain_counts() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    update tools set vote_count = vote_count + 1 where id = new.tool_id;
    insert into tool_vote_days (tool_id, day, votes) values (new.tool_id, (new.created_at at time zone 'UTC')::date, 1)
      on conflict (tool_id, day) do update set votes = tool_vote_days.votes + 1;
    return new;
  end if;
  update tools set vote_count = vote_count - 1 where id = old.tool_id;
  update tool_vote_days set votes = votes - 1 where tool_id = old.tool_id and day = (old.created_at at time zone 'UTC')::date;
  return old;
end
$$;

create or replace trigger votes_maintain_counts after insert or delete on votes
  for each row execute function votes_maintain_counts();
`,
);
