import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * POST /api/bookings in one round trip: the agent's row lock, the idempotency record, the cap (a kept count,
 * counted afresh only at the cap), the insert and its booking.created event.
 */
export const createBookingFunction = sqlDefinition(
  'create_booking',
  `
create or replace function create_booking(p_booking jsonb, p_slots jsonb, p_cap int, p_key text, p_request_hash text,
                                          p_key_valid_after timestamptz, p_at timestamptz)
returns jsonb language plpgsql as $$
declare
  v_agent uuid := (p_booking->>'agentId')::uuid;
  v_stored record;
  v_live int;
  v_event record;
begin
  perform 1 from agents where id = v_agent for no key update;
  if p_key is not null then
    select k.request_hash, k.outcome into v_stored from idempotency_keys k
     where k.agent_id = v_agent and k.operation = 'create_booking' and k.key = p_key and k.created_at >= p_key_valid_after;
    if found then
      if v_stored.request_hash <> p_request_hash then return '{"conflict": true}'::jsonb; end if;
      return jsonb_build_object('replay', v_stored.outcome);
    end if;
  end if;
  -- Live bookings (a series counts while any of its slots has not ended). The kept count is at least
  -- the live ones (agent_live_bookings): under the cap it answers alone; otherwise bookings that ended
  -- since it was taken may be in it, so the live ones are counted afresh and it starts again from now.
  select c.live into v_live from agent_live_bookings c where c.agent_id = v_agent;
  if v_live is null or v_live >= p_cap then
    select count(*) into v_live from bookings b where b.agent_id = v_agent and b.status = 'confirmed' and b.live_until > p_at;
    insert into agent_live_bookings (agent_id, counted_after, live) values (v_agent, p_at, v_live)
      on conflict (agent_id) do update set counted_after = excluded.counted_after, live = excluded.live;
    if v_live >= p_cap then return '{"refused": "booking_cap_reached"}'::jsonb; end if;
  end if;

  perform booking_insert((p_booking->>'id')::uuid, v_agent, (p_booking->>'startsAt')::timestamptz, (p_booking->>'endsAt')::timestamptz,
                         p_booking->>'rrule', (p_booking->>'createdAt')::timestamptz, p_slots);
  if p_key is not null then
    insert into idempotency_keys (agent_id, operation, key, request_hash, outcome, created_at)
    values (v_agent, 'create_booking', p_key, p_request_hash, jsonb_build_object('ok', p_booking), p_at)
    on conflict (agent_id, operation, key) do update
      set request_hash = excluded.request_hash, outcome = excluded.outcome, created_at = excluded.created_at;
  end if;
  select * into v_event from record_booking_event(v_agent, 'booking.created', p_booking, p_at);
  return jsonb_build_object('events', jsonb_build_array(jsonb_build_object(
    'eventId', v_event.event_id::text, 'previousEventId', v_event.previous_event_id::text, 'agentId', v_agent, 'type', 'booking.created')),
    'deliveries', v_event.deliveries);
end
$$;
`,
);
