import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * POST /api/bookings in one round trip: the agent's row lock, the idempotency record (idempotency_lookup and
 * idempotency_record), the cap (a kept count, counted afresh only at the cap), the insert, and its booking.created
 * event. Answers `{booking, events}` with the inserted row as `booking_item()` writes it (the same item the event
 * carries and a repeat of the key replays), or why nothing was written.
 */
export const createBookingFunction = sqlDefinition(
  'create_booking',
  `
create or replace function create_booking(p_agent uuid, p_starts_at timestamptz, p_ends_at timestamptz, p_rrule text, p_slots jsonb,
                                          p_cap int, p_key text, p_request_hash text, p_key_valid_after timestamptz, p_at timestamptz)
returns jsonb language plpgsql as $$
declare
  v_stored jsonb;
  v_live int;
  v_booking bookings;
  v_item jsonb;
begin
  perform 1 from agents where id = p_agent for no key update;
  if p_key is not null then
    v_stored := idempotency_lookup(p_agent, 'create_booking', p_key, p_request_hash, p_key_valid_after);
    if v_stored is not null then return v_stored; end if;
  end if;
  -- Live bookings (a series counts while any of its slots has not ended). The kept count is at least
  -- the live ones (agent_live_bookings): under the cap it answers alone; otherwise bookings that ended
  -- since it was taken may be in it, so the live ones are counted afresh and it starts again from now.
  select c.live into v_live from agent_live_bookings c where c.agent_id = p_agent;
  if v_live is null or v_live >= p_cap then
    select count(*) into v_live from bookings b where b.agent_id = p_agent and b.status = 'confirmed' and b.live_until > p_at;
    insert into agent_live_bookings (agent_id, counted_after, live) values (p_agent, p_at, v_live)
      on conflict (agent_id) do update set counted_after = excluded.counted_after, live = excluded.live;
    if v_live >= p_cap then return '{"refused": "booking_cap_reached"}'::jsonb; end if;
  end if;

  v_booking := booking_insert(gen_random_uuid(), p_agent, p_starts_at, p_ends_at, p_rrule, p_at, p_slots);
  v_item := booking_item(v_booking);
  if p_key is not null then
    perform idempotency_record(p_agent, 'create_booking', p_key, p_request_hash, jsonb_build_object('ok', v_item), p_at, p_key_valid_after);
  end if;
  return jsonb_build_object('booking', v_item, 'events', jsonb_build_array(record_booking_event(p_agent, 'booking.created', v_booking, p_at)));
end
$$;
`,
);
