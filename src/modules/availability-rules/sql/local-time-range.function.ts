import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The instants whose wall-clock time in `p_zone` lies in [p_from, p_to) (local timestamps): what working hours mean.
 * Away from a daylight-saving change that is one range, the local times read with the zone's offset. Around a change
 * the offset before applies until the change and the one after from it, so a wall-clock time the change skips (a
 * skipped 00:15) starts working time at the change, the first minute that exists (PostgreSQL's own reading, with the
 * offset before the gap, put it a quarter of an hour past the change), and an hour the change repeats is working
 * time on both passes. The change is found by halving the three days around the window to the second, only when the
 * offsets at their ends differ (real zones change at most once in three days).
 */
export const localTimeRangeFunction = sqlDefinition(
  'local_time_range',
  `
create or replace function local_time_range(p_zone text, p_from timestamp, p_to timestamp) returns tstzmultirange
language plpgsql stable as $$
declare
  v_low bigint := extract(epoch from (p_from - interval '1 day'))::bigint;
  v_high bigint := extract(epoch from (p_to + interval '1 day'))::bigint;
  v_before interval := timezone(p_zone, to_timestamp(v_low)) - timezone('UTC', to_timestamp(v_low));
  v_after interval := timezone(p_zone, to_timestamp(v_high)) - timezone('UTC', to_timestamp(v_high));
  v_middle bigint;
  v_change timestamptz;
begin
  if p_to <= p_from then return '{}'::tstzmultirange; end if;
  if v_before = v_after then
    return tstzmultirange(tstzrange(timezone('UTC', p_from - v_before), timezone('UTC', p_to - v_before), '[)'));
  end if;
  while v_high - v_low > 1 loop
    v_middle := (v_low + v_high) / 2;
    if timezone(p_zone, to_timestamp(v_middle)) - timezone('UTC', to_timestamp(v_middle)) = v_before then v_low := v_middle; else v_high := v_middle; end if;
  end loop;
  v_change := to_timestamp(v_high);
  return tstzmultirange(tstzrange(timezone('UTC', p_from - v_before), timezone('UTC', p_to - v_before), '[)') * tstzrange(null, v_change, '[)'))
       + tstzmultirange(tstzrange(timezone('UTC', p_from - v_after), timezone('UTC', p_to - v_after), '[)') * tstzrange(v_change, null, '[)'));
end
$$;
`,
);
