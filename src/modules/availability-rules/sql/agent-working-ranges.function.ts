import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * An agent's working time inside [p_from, p_to) as a multirange of instants: for every local date of the window,
 * that date's override (an empty one: a day off), else the weekly hours of its ISO weekday, else (no weekly hours)
 * the whole day. Local wall-clock minutes become instants in the rules' zone by PostgreSQL's rule: a time a
 * daylight-saving change skips is read with the offset before the change, one it repeats with the offset after it;
 * an interval whose end so lands at or before its start is empty. The one definition of "working time" that
 * availability, slot_refusals and the writers use.
 */
export const agentWorkingRangesFunction = sqlDefinition(
  'agent_working_ranges',
  `
create or replace function agent_working_ranges(p_rules availability_rules, p_from timestamptz, p_to timestamptz)
returns tstzmultirange language sql stable as $$
  select coalesce(range_agg(tstzrange(local.starts_at, local.ends_at, '[)')), '{}'::tstzmultirange)
         * tstzmultirange(tstzrange(p_from, p_to, '[)'))
    from generate_series((p_from at time zone p_rules.time_zone)::date::timestamp,
                         (p_to at time zone p_rules.time_zone)::date::timestamp, interval '1 day') as d(day)
   cross join lateral (
     select coalesce((select o.hours from availability_overrides o where o.agent_id = p_rules.agent_id and o.on_date = d.day::date),
                     p_rules.weekly_hours[extract(isodow from d.day)::int],
                     '{[0,1440)}'::int4multirange) as hours
   ) day_hours
   cross join lateral unnest(day_hours.hours) as h(minutes)
   cross join lateral (
     select (d.day + make_interval(mins => lower(h.minutes))) at time zone p_rules.time_zone as starts_at,
            (d.day + make_interval(mins => upper(h.minutes))) at time zone p_rules.time_zone as ends_at
   ) local
   where local.starts_at < local.ends_at;
$$;
`,
);
