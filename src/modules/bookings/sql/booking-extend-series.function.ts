import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The nightly horizon extension: a series' next occurrences become slots, except those whose blocked range (the
 * occurrence widened by the agent's buffers) another live slot of the agent overlaps; those leave the series
 * (EXDATEs: the time was taken while it lay beyond the horizon). Expired holds in the way go first. Answers how
 * many of each. A writer (see booking_insert).
 */
export const bookingExtendSeriesFunction = sqlDefinition(
  'booking_extend_series',
  `
create or replace function booking_extend_series(p_booking uuid, p_candidates jsonb, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_agent uuid;
  v_before interval;
  v_after interval;
  v_taken timestamptz[];
  v_added int;
begin
  select agent_id into v_agent from bookings where id = p_booking;
  select coalesce(make_interval(mins => r.buffer_before_minutes), interval '0'), coalesce(make_interval(mins => r.buffer_after_minutes), interval '0')
    into v_before, v_after from (select 1) one left join availability_rules r on r.agent_id = v_agent;
  perform booking_purge_expired_holds(v_agent,
    array(select tstzrange(o.starts_at, o.ends_at, '[)') from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)), p_at);
  select coalesce(array_agg(distinct o.starts_at), '{}') into v_taken
    from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
   where exists (select 1 from booking_slots s
                  where s.agent_id = v_agent
                    and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange(o.starts_at - v_before, o.ends_at + v_after, '[)'));
  if cardinality(v_taken) > 0 then
    perform booking_exclude_occurrences(p_booking, v_taken);
  end if;
  insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
  select p_booking, v_agent, o.starts_at, o.ends_at, o.starts_at - v_before, o.ends_at + v_after
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
