import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A confirmed booking with its slots, `live_until` from the slots. A writer: takes no lock and records no event
 * (its caller holds the agent's row lock and records the event the operation means).
 */
export const bookingInsertFunction = sqlDefinition(
  'booking_insert',
  `
create or replace function booking_insert(p_id uuid, p_agent uuid, p_starts_at timestamptz, p_ends_at timestamptz, p_rrule text,
                               p_created_at timestamptz, p_slots jsonb)
returns bookings language plpgsql as $$
declare
  v_booking bookings;
begin
  insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
  values (p_id, p_agent, p_starts_at, p_ends_at, 'confirmed', p_rrule, '[]'::jsonb, p_created_at,
          (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz)))
  returning * into v_booking;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
  select p_id, p_agent, s.starts_at, s.ends_at
    from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
  return v_booking;
end
$$;
`,
);
