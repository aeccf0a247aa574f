import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { actForRuleSql } from '../../agents/index.js';

/**
 * One meeting on several calendars, all or none, in one transaction: the caller's and the calendars' row locks in id
 * order (so two group bookings over the same agents never deadlock); the idempotency record; the calendars the caller
 * may act for (agents/access.ts, `actFor`: its own and its children's); per calendar the cap and its rules (they
 * bind a caller other than itself), every calendar asked before any is written; then, expired holds in the way
 * purged, one confirmed booking and one booking.created event per calendar.
 * Answers `{bookings, events}` (in agent id order), or why nothing was written.
 */
export const createGroupBookingFunction = sqlDefinition(
  'create_group_booking',
  `
create or replace function create_group_booking(p_actor uuid, p_agents uuid[], p_starts timestamptz, p_ends timestamptz, p_cap int,
                                                p_key text, p_request_hash text, p_key_valid_after timestamptz, p_at timestamptz)
returns jsonb language plpgsql as $$
declare
  v_agents uuid[] := array(select distinct a from unnest(p_agents) as a order by a);
  v_stored jsonb;
  v_refused uuid[];
  v_agent uuid;
  v_refusal jsonb;
  v_booking bookings;
  v_slots jsonb := jsonb_build_array(jsonb_build_object('starts_at', p_starts, 'ends_at', p_ends));
  v_items jsonb := '[]'::jsonb;
  v_events jsonb := '[]'::jsonb;
begin
  perform 1 from agents where id = any(v_agents || p_actor) order by id for no key update;
  if p_key is not null then
    v_stored := idempotency_lookup(p_actor, 'create_group_booking', p_key, p_request_hash, p_key_valid_after);
    if v_stored is not null then return v_stored; end if;
  end if;
  select array_agg(asked.id order by asked.id) into v_refused
    from unnest(v_agents) as asked(id) left join agents a on a.id = asked.id
   where a.id is null or not ${actForRuleSql('p_actor', 'a')};
  if v_refused is not null then return jsonb_build_object('forbidden', v_refused); end if;
  foreach v_agent in array v_agents loop
    if booking_cap_reached(v_agent, p_cap, p_at) then return jsonb_build_object('capReached', v_agent); end if;
    v_refusal := booking_refusal(p_actor, v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at, null);
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal || jsonb_build_object('agentId', v_agent)); end if;
  end loop;
  foreach v_agent in array v_agents loop
    perform booking_purge_expired_holds(v_agent, array[tstzrange(p_starts, p_ends, '[)')], p_at);
    v_booking := booking_insert(gen_random_uuid(), v_agent, p_starts, p_ends, null, '[]'::jsonb, p_at, v_slots, null);
    v_items := v_items || jsonb_build_array(booking_item(v_booking));
    v_events := v_events || jsonb_build_array(record_booking_event(v_agent, 'booking.created', v_booking, p_at));
  end loop;
  if p_key is not null then
    perform idempotency_record(p_actor, 'create_group_booking', p_key, p_request_hash, jsonb_build_object('ok', v_items), p_at, p_key_valid_after);
  end if;
  return jsonb_build_object('bookings', v_items, 'events', v_events);
end
$$;
`,
);
