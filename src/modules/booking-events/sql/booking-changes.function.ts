import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { changeFeedRuleSql } from '../../agents/index.js';

/**
 * One page of a change feed: the events of some agents after a cursor, in cursor order, each with its
 * booking as it is now (or why it is gone from that agent's calendar), in one round trip.
 *
 * Why a family read locks and a single agent's does not. Every writer of an agent's events holds the
 * agent's row (`for no key update`, record_booking_event) from before it takes the event id until it
 * commits, so one agent's ids commit in order: a reader that sees an agent's event sees every earlier
 * one of that agent. Across agents, ids are taken before commit, so a family reader could see agent B's
 * id 11 while agent A's id 10 is still in flight, hand out 11 as the next cursor, and never see 10
 * (Hasura #8632). So a family read first takes `for share` on every member's row: that waits for the
 * members' writers in flight and keeps new ones from taking ids until this read commits; the events
 * are then read by a later statement, whose snapshot (READ COMMITTED, a volatile function) holds every
 * member event with a smaller id than any new one. The members are read again after the locks, until
 * no agent joined meanwhile (a child created and writing while the read waited would otherwise hold
 * an id below the page's last).
 *
 * What it costs the writers. Locks taken in order, waiting, would hold the members before a busy one
 * while the read waits for that one's writer, and their writers would wait as long. So the locks are
 * taken all at once without waiting (`nowait`); when a member has a writer in flight, the read lets go
 * of everything, waits for that writer alone, and tries again. Three tries, then (members kept busy by
 * new writers) it takes them in order, waiting, as before. Each try is a few subtransactions (exception
 * blocks: the try, finding the busy members, one wait per busy member), whose row locks end with them.
 *
 * `change_kind`: `change` rows; or a single row `head` (no `since`: the newest cursor of the members,
 * to follow from), `expired` (an event after `since` was deleted by retention; `event_id` is the newest
 * deleted), `unknown_cursor` (`since` was never handed out here), `too_many` (`event_id` is how many
 * agents the family has).
 */
export const bookingChangesFunction = sqlDefinition(
  'booking_changes',
  `
create or replace function booking_changes(p_agents uuid[], p_family_of uuid, p_family_parent uuid, p_since bigint, p_limit int, p_family_max int)
returns table (change_kind text, event_id bigint, event_agent_id uuid, event_type text, occurred_at timestamptz,
               booking_id uuid, current_booking jsonb, gone text)
language plpgsql volatile as $$
declare
  v_members uuid[] := p_agents;
  v_locked uuid[];
  v_held boolean;
  v_busy uuid[];
  v_member uuid;
  v_through bigint;
begin
  if p_family_of is not null then
    loop
      v_members := array(select a.id from agents a where ${changeFeedRuleSql('p_family_of', 'p_family_parent', 'a')} order by a.id);
      if cardinality(v_members) > p_family_max then
        return query select 'too_many'::text, cardinality(v_members)::bigint, null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text;
        return;
      end if;
      exit when v_members = v_locked;
      v_held := false;
      for attempt in 1 .. 3 loop
        begin
          perform 1 from agents a where a.id = any (v_members) order by a.id for share nowait;
          v_held := true;
        exception when lock_not_available then
          null; -- the subtransaction's locks are gone with it
        end;
        exit when v_held;
        -- The members with a writer in flight: the others are locked only to find them, and let go at once.
        begin
          with free as (select a.id from agents a where a.id = any (v_members) for share skip locked)
          select array(select m.id from unnest(v_members) as m(id) where m.id <> all (array(select free.id from free))) into v_busy;
          raise sqlstate 'GW001';
        exception when sqlstate 'GW001' then
          null;
        end;
        -- Wait for each of their writers alone, holding nothing else.
        foreach v_member in array v_busy loop
          begin
            perform 1 from agents a where a.id = v_member for share;
            raise sqlstate 'GW001';
          exception when sqlstate 'GW001' then
            null;
          end;
        end loop;
      end loop;
      if not v_held then
        -- New writers kept some member busy: take the locks in order, waiting.
        perform 1 from agents a where a.id = any (v_members) order by a.id for share;
      end if;
      v_locked := v_members;
    end loop;
  end if;

  if p_since is null then
    return query
      select 'head'::text,
             greatest(coalesce(max(latest.id), 0), coalesce((select max(p.through) from booking_events_pruned p where p.agent_id = any (v_members)), 0)),
             null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text
        from unnest(v_members) as member(id)
        cross join lateral (select max(e.id) as id from booking_events e where e.agent_id = member.id) latest;
    return;
  end if;

  -- Never handed out here (another installation, a restored backup behind its clients): following it
  -- would silently skip everything up to it.
  if p_since > (select s.last_value from booking_events_id_seq s) then
    return query select 'unknown_cursor'::text, p_since, null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text;
    return;
  end if;
  select max(p.through) into v_through from booking_events_pruned p where p.agent_id = any (v_members) and p.through > p_since;
  if v_through is not null then
    return query select 'expired'::text, v_through, null::uuid, null::text, null::timestamptz, null::uuid, null::jsonb, null::text;
    return;
  end if;

  -- At most p_limit ids per member from its index range, then the page: bounded by members × limit
  -- however far behind the cursor is.
  return query
    with picked as (
      select next_ids.id
        from unnest(v_members) as member(id)
        cross join lateral (select e.id from booking_events e where e.agent_id = member.id and e.id > p_since order by e.id limit p_limit) next_ids
       order by next_ids.id
       limit p_limit
    )
    select 'change'::text, e.id, e.agent_id, e.type::text, e.created_at, e.booking_id,
           case when b.agent_id = e.agent_id then booking_item(b) end,
           case when b.id is null then 'removed' when b.agent_id <> e.agent_id then 'transferred' end
      from picked
      join booking_events e on e.id = picked.id
      left join bookings b on b.id = e.booking_id
     order by e.id;
end
$$;
`,
);
