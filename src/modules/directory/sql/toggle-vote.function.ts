import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A user's vote on a tool, on or off, in one call. One user's toggles of one tool run one at a time (an
 * advisory lock on the pair); `vote_count` follows the rows by the votes trigger. Answers
 * `{"missing": true}` for an unknown tool, else `{voted, voteCount}`.
 */
export const toggleVoteFunction = sqlDefinition(
  'toggle_vote',
  `
create or replace function toggle_vote(p_user uuid, p_tool bigint, p_agent_id text, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_removed int;
begin
  if not exists (select 1 from tools where id = p_tool) then return '{"missing": true}'::jsonb; end if;
  perform pg_advisory_xact_lock(hashtextextended('vote:' || p_user || ':' || p_tool, 0));
  delete from votes where tool_id = p_tool and user_id = p_user;
  get diagnostics v_removed = row_count;
  if v_removed = 0 then
    insert into votes (tool_id, user_id, agent_id, created_at) values (p_tool, p_user, p_agent_id, p_at);
  end if;
  return jsonb_build_object('voted', v_removed = 0, 'voteCount', (select vote_count from tools where id = p_tool));
end;
$$;
`,
);
