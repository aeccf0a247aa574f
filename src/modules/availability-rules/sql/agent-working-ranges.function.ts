import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * An agent's working time inside [p_from, p_to) as a multirange of instants: for every local date of the window,
 * that date's override (an empty one: a day off), else the weekly hours of its ISO weekday, else (no weekly hours)
 * the whole day. An interval is the instants whose wall-clock time in the rules' zone lies in it (local_time_range):
 * across a daylight-saving change, the minutes that exist of it, on both passes of a repeated hour. The one
 * definition of "working time" that availability, slot_refusals and the writers use.
 */
export const agentWorkingRangesFunction = sqlDefinition(
  'agent_working_ranges',
  `
create or replace function agent_working_ranges(p_rules availability_rules, p_from timestamptz, p_to timestamptz)
returns tstzmultirange language sql stable as $$
  select coalesce(range_agg(local.ranges), '{}'::tstzmultirange) * tstzmultirange(tstzrange(p_from, p_to, '[)'))
    from generate_series((p_from at time zone p_rules.time_zone)::date::timestamp,
                         (p_to at time zone p_rules.time_zone)::date::timestamp, interval '1 day') as d(day)
   cross join lateral (
     select coalesce((select o.hours from availability_overrides o where o.agent_id = p_rules.agent_id and o.on_date = d.day::date),
                     p_rules.weekly_hours[extract(isodow from d.day)::int],
                     '{[0,1440)}'::int4multirange) as hours
   ) day_hours
   cross join lateral unnest(day_hours.hours) as h(minutes)
   cross join lateral local_time_range(p_rules.time_zone, d.day + make_interval(mins => lower(h.minutes)),
                                       d.day + make_interval(mins => upper(h.minutes))) as local(ranges);
$$;
`,
);
