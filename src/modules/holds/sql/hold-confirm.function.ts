import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Confirms a live hold in one transaction: under the holder's and its calendars' row locks (in id order), each held
 * booking becomes a confirmed booking with the same id, under the cap and the limits (the time rules were checked
 * when it was held), with one booking.created event per calendar. All or none. Idempotent: confirming a confirmed
 * hold answers the same bookings. An expired hold (or one whose held bookings a writer purged after expiry) or a
 * released one is refused (`hold_expired`, `hold_released`) and writes nothing.
 */
export const holdConfirmFunction = sqlDefinition(
  'hold_confirm',
  `
create or replace function hold_confirm(p_actor uuid, p_hold uuid, p_cap int, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_hold holds;
  v_held bookings;
  v_booking bookings;
  v_refusal jsonb;
  v_items jsonb := '[]'::jsonb;
  v_events jsonb := '[]'::jsonb;
begin
  select * into v_hold from holds where id = p_hold;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_hold.holder_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id = any(v_hold.agent_ids || v_hold.holder_agent_id) order by id for no key update;
  select * into v_hold from holds where id = p_hold;
  if v_hold.confirmed_at is not null then
    return jsonb_build_object('hold', hold_item(p_hold, p_at),
                              'bookings', (select jsonb_agg(booking_item(b) order by b.agent_id) from bookings b where b.hold_id = p_hold));
  end if;
  if v_hold.released_at is not null then return '{"refused": {"code": "hold_released"}}'::jsonb; end if;
  if v_hold.expires_at <= p_at
     or (select count(*) from bookings b where b.hold_id = p_hold and b.status = 'held') < cardinality(v_hold.agent_ids) then
    return jsonb_build_object('refused', jsonb_build_object('code', 'hold_expired', 'expiresAt', iso_instant(v_hold.expires_at)));
  end if;
  for v_held in select * from bookings b where b.hold_id = p_hold order by b.agent_id loop
    if booking_cap_reached(v_held.agent_id, p_cap, p_at) then return jsonb_build_object('capReached', v_held.agent_id); end if;
    select reason || jsonb_build_object('agentId', v_held.agent_id) into v_refusal
      from jsonb_array_elements(slot_refusals(p_actor, v_held.agent_id, array[tstzrange(v_held.starts_at, v_held.ends_at, '[)')], p_at, v_held.id, 20)) as reason
     where reason->>'code' in ('daily_limit_reached', 'weekly_limit_reached')
     limit 1;
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;
  end loop;
  for v_held in select * from bookings b where b.hold_id = p_hold order by b.agent_id loop
    v_booking := booking_confirm_held(v_held.id);
    v_items := v_items || jsonb_build_array(booking_item(v_booking));
    v_events := v_events || jsonb_build_array(record_booking_event(v_booking.agent_id, 'booking.created', v_booking, p_at));
  end loop;
  update holds set confirmed_at = p_at where id = p_hold;
  return jsonb_build_object('hold', hold_item(p_hold, p_at), 'bookings', v_items, 'events', v_events);
end
$$;
`,
);
