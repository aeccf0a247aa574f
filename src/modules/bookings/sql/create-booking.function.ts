import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * POST /api/bookings in one round trip: the agent's row lock, the idempotency record (idempotency_lookup and
 * idempotency_record), the cap (booking_cap_reached), an agent's rules (booking_refusal), the expired holds in the way
 * (booking_purge_expired_holds), the insert, and its booking.created event. Answers `{booking, events}` with the inserted row as
 * `booking_item()` writes it (the same item the event carries and a repeat of the key replays), or why nothing was
 * written: `{refused: <reason>}` (a rule, see slot_refusals), `{capReached: true}`, `{conflict: true}`, `{replay: …}`.
 */
export const createBookingFunction = sqlDefinition(
  'create_booking',
  `
create or replace function create_booking(p_agent uuid, p_starts_at timestamptz, p_ends_at timestamptz, p_rrule text, p_slots jsonb,
                                          p_cap int, p_key text, p_request_hash text, p_key_valid_after timestamptz, p_at timestamptz)
returns jsonb language plpgsql as $$
declare
  v_stored jsonb;
  v_refusal jsonb;
  v_booking bookings;
  v_item jsonb;
  v_ranges tstzrange[] := array(select tstzrange(s.starts_at, s.ends_at, '[)') from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz));
begin
  perform 1 from agents where id = p_agent for no key update;
  if p_key is not null then
    v_stored := idempotency_lookup(p_agent, 'create_booking', p_key, p_request_hash, p_key_valid_after);
    if v_stored is not null then return v_stored; end if;
  end if;
  if booking_cap_reached(p_agent, p_cap, p_at) then return '{"capReached": true}'::jsonb; end if;
  v_refusal := booking_refusal(p_agent, p_agent, v_ranges, p_at, null);
  if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;

  perform booking_purge_expired_holds(p_agent, v_ranges, p_at);
  v_booking := booking_insert(gen_random_uuid(), p_agent, p_starts_at, p_ends_at, p_rrule, '[]'::jsonb, p_at, p_slots, null);
  v_item := booking_item(v_booking);
  if p_key is not null then
    perform idempotency_record(p_agent, 'create_booking', p_key, p_request_hash, jsonb_build_object('ok', v_item), p_at, p_key_valid_after);
  end if;
  return jsonb_build_object('booking', v_item, 'events', jsonb_build_array(record_booking_event(p_agent, 'booking.created', v_booking, p_at)));
end
$$;
`,
);
