import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The instant a zone's UTC offset changes inside (p_from, p_to], to the second (zones change on whole seconds), or
 * null when the offset at p_to is the one at p_from; with more than one change in between, one of them. Halves the
 * span to the second: about 18 steps for a day. common_working_ranges calls it once per change in a window and zone.
 */
export const zoneOffsetChangeFunction = sqlDefinition(
  'zone_offset_change',
  `
create or replace function zone_offset_change(p_zone text, p_from timestamptz, p_to timestamptz) returns timestamptz
language plpgsql stable as $$
declare
  v_low bigint := extract(epoch from p_from)::bigint;
  v_high bigint := extract(epoch from p_to)::bigint;
  v_before interval := timezone(p_zone, to_timestamp(v_low)) - timezone('UTC', to_timestamp(v_low));
  v_middle bigint;
begin
  if timezone(p_zone, to_timestamp(v_high)) - timezone('UTC', to_timestamp(v_high)) = v_before then return null; end if;
  while v_high - v_low > 1 loop
    v_middle := (v_low + v_high) / 2;
    if timezone(p_zone, to_timestamp(v_middle)) - timezone('UTC', to_timestamp(v_middle)) = v_before then v_low := v_middle; else v_high := v_middle; end if;
  end loop;
  return to_timestamp(v_high);
end
$$;
`,
);
