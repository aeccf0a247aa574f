import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A booking with its slots (and the EXDATEs of a series, already left out of them), `live_until` from the slots:
 * confirmed, or held for `p_hold` (its slots then carry the hold). Each slot blocks its range widened by the agent's buffers as they are now (booking_slots_no_overlap
 * compares those). A writer: takes no lock and records no event (its caller holds the agent's row lock, has purged
 * expired holds, and records the event the operation means).
 */
export const bookingInsertFunction = sqlDefinition(
  'booking_insert',
  `
create or replace function booking_insert(p_id uuid, p_agent uuid, p_starts_at timestamptz, p_ends_at timestamptz, p_rrule text,
                               p_exdates jsonb, p_created_at timestamptz, p_slots jsonb, p_hold uuid)
returns bookings language plpgsql as $$
declare
  v_booking bookings;
  v_before interval;
  v_after interval;
begin
  select make_interval(mins => r.buffer_before_minutes), make_interval(mins => r.buffer_after_minutes)
    into v_before, v_after from availability_rules r where r.agent_id = p_agent;
  insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until, hold_id)
  values (p_id, p_agent, p_starts_at, p_ends_at, case when p_hold is null then 'confirmed' else 'held' end, p_rrule, p_exdates, p_created_at,
          (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz)), p_hold)
  returning * into v_booking;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until, hold_id)
  select p_id, p_agent, s.starts_at, s.ends_at, s.starts_at - coalesce(v_before, interval '0'), s.ends_at + coalesce(v_after, interval '0'), p_hold
    from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
  return v_booking;
end
$$;
`,
);
