import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { actForRuleSql } from '../../agents/index.js';

/**
 * A hold of [p_starts, p_ends) on every calendar of `p_agents` for `p_actor`, all or none: the holder's and the
 * calendars' row locks in id order (so concurrent multi-calendar writers never deadlock); the calendars the holder
 * may act for (agents/access.ts, `actFor`); the holder's live holds under `p_max_live`; per calendar the cap and its
 * rules (booking_refusal: they bind a holder other than the calendar itself), every calendar asked before any is
 * written; then the hold and, expired holds in the way purged, one held booking per calendar. Answers `{hold}`, or why nothing was written.
 */
export const holdCreateFunction = sqlDefinition(
  'hold_create',
  `
create or replace function hold_create(p_actor uuid, p_hold uuid, p_agents uuid[], p_starts timestamptz, p_ends timestamptz,
                                       p_expires timestamptz, p_cap int, p_max_live int, p_at timestamptz)
returns jsonb language plpgsql as $$
declare
  v_agents uuid[] := array(select distinct a from unnest(p_agents) as a order by a);
  v_refused uuid[];
  v_agent uuid;
  v_refusal jsonb;
  v_slots jsonb := jsonb_build_array(jsonb_build_object('starts_at', p_starts, 'ends_at', p_ends));
begin
  perform 1 from agents where id = any(v_agents || p_actor) order by id for no key update;
  select array_agg(asked.id order by asked.id) into v_refused
    from unnest(v_agents) as asked(id) left join agents a on a.id = asked.id
   where a.id is null or not ${actForRuleSql('p_actor', 'a')};
  if v_refused is not null then return jsonb_build_object('forbidden', v_refused); end if;
  if (select count(*) from holds h
       where h.holder_agent_id = p_actor and h.expires_at > p_at and h.confirmed_at is null and h.released_at is null) >= p_max_live then
    return '{"limitExceeded": true}'::jsonb;
  end if;
  foreach v_agent in array v_agents loop
    if booking_cap_reached(v_agent, p_cap, p_at) then return jsonb_build_object('capReached', v_agent); end if;
    v_refusal := booking_refusal(p_actor, v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at, null);
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal || jsonb_build_object('agentId', v_agent)); end if;
  end loop;
  insert into holds (id, holder_agent_id, agent_ids, starts_at, ends_at, expires_at, created_at)
  values (p_hold, p_actor, v_agents, p_starts, p_ends, p_expires, p_at);
  foreach v_agent in array v_agents loop
    perform booking_purge_expired_holds(v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at);
    perform booking_insert(gen_random_uuid(), v_agent, p_starts, p_ends, null, '[]'::jsonb, p_at, v_slots, p_hold);
  end loop;
  return jsonb_build_object('hold', hold_item(p_hold, p_at));
end
$$;
`,
);
