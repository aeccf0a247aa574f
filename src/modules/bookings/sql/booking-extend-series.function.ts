import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The nightly horizon extension: a series' next occurrences become slots, except those another slot of the agent
 * overlaps, which leave the series (EXDATEs: the time was taken while it lay beyond the horizon). Answers how
 * many of each. A writer (see booking_insert).
 */
export const bookingExtendSeriesFunction = sqlDefinition(
  'booking_extend_series',
  `
create or replace function booking_extend_series(p_booking uuid, p_candidates jsonb) returns jsonb language plpgsql as $$
declare
  v_agent uuid;
  v_taken timestamptz[];
  v_added int;
begin
  select agent_id into v_agent from bookings where id = p_booking;
  select coalesce(array_agg(distinct o.starts_at), '{}') into v_taken
    from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
   where exists (select 1 from booking_slots s
                  where s.agent_id = v_agent and tstzrange(s.starts_at, s.ends_at, '[)') && tstzrange(o.starts_at, o.ends_at, '[)'));
  if cardinality(v_taken) > 0 then
    perform booking_exclude_occurrences(p_booking, v_taken);
  end if;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
  select p_booking, v_agent, o.starts_at, o.ends_at
    from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
   where o.starts_at <> all(v_taken);
  get diagnostics v_added = row_count;
  -- The series counts against the cap as long as its materialised slots reach.
  update bookings set live_until = (select max(s.ends_at) from booking_slots s where s.booking_id = p_booking) where id = p_booking;
  return jsonb_build_object('added', v_added, 'skipped', cardinality(v_taken));
end
$$;
`,
);
