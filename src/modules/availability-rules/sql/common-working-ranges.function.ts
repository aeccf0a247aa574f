import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The working time of each of several agents inside [p_from, p_to), one row per rules row given (an agent with no
 * working time in the window answers an empty multirange): the one definition of "working time" that availability,
 * slot_refusals and the writers use (agent_working_ranges is this for one agent).
 *
 * For every local date of the window: that date's override (an empty one: a day off), else the weekly hours of its
 * ISO weekday, else (no weekly hours) the whole day. An interval is the instants whose wall-clock time in the rules'
 * zone lies in it. Away from a daylight-saving change that is one range, the local times read with the zone's
 * offset. Around a change the offset before applies until the change and the one after from it, so a wall-clock time
 * the change skips (a skipped 00:15) starts working time at the change, the first minute that exists (PostgreSQL's
 * own reading, with the offset before the gap, put it a quarter of an hour past the change), and an hour the change
 * repeats is working time on both passes. "Around" is the three local days from the day before the interval's to
 * the day after (real zones change at most once in three days): when the offsets at their ends agree, the interval
 * is read with that offset.
 *
 * Set-based, so that availability evaluates it once for all the agents it asks about, and cheap per interval (a
 * month of ten agents' hours is some 500 of them): each agent's weekly hours are unnested once and joined to the
 * window's days, its zone's offset is read once per local midnight of the window, a change's instant is found once
 * (zone_offset_change), not for every interval next to it, and an interval's instants are arithmetic from the first
 * midnight's (no zone looked up per interval). A plain SQL function, so PostgreSQL inlines it into the statement
 * that calls it.
 */
export const workingRangesOfFunction = sqlDefinition(
  'working_ranges_of',
  `
create or replace function working_ranges_of(p_rules availability_rules[], p_from timestamptz, p_to timestamptz)
returns table (agent_id uuid, ranges tstzmultirange) language sql stable as $$
  select rules.agent_id,
         coalesce((
           with weekly as materialized (
             select w.isodow::int as isodow, h.minutes
               from unnest(coalesce(rules.weekly_hours, array_fill('{[0,1440)}'::int4multirange, array[7]))) with ordinality as w(hours, isodow)
              cross join lateral unnest(coalesce(w.hours, '{[0,1440)}'::int4multirange)) as h(minutes)
           )
           select range_agg(
                    case when local.offset_before = local.offset_after
                         then tstzmultirange(tstzrange(local.starts - local.offset_before, local.ends - local.offset_before, '[)'))
                         else tstzmultirange(tstzrange(local.starts - local.offset_before, local.ends - local.offset_before, '[)') * tstzrange(null, local.change, '[)'))
                            + tstzmultirange(tstzrange(local.starts - local.offset_after, local.ends - local.offset_after, '[)') * tstzrange(local.change, null, '[)')) end)
             from (
               -- n: the day's place in the window (0 for the first).
               select d.n, weekly.minutes
                 from generate_series(0, zone.last_day - zone.first_day) as d(n)
                 join weekly on weekly.isodow = extract(isodow from zone.first_day + d.n)::int
                where not exists (select 1 from availability_overrides o where o.agent_id = rules.agent_id and o.on_date = zone.first_day + d.n)
               union all
               select o.on_date - zone.first_day, h.minutes
                 from availability_overrides o
                cross join lateral unnest(o.hours) as h(minutes)
                where o.agent_id = rules.agent_id and o.on_date between zone.first_day and zone.last_day
             ) day_hours
            cross join lateral (
              -- The interval's wall-clock times read as UTC instants (plain arithmetic from the first midnight's: a day
              -- is 24 hours there), the offsets at the midnights beginning the day before and ending the day after,
              -- and (only read when they differ) the change between them.
              select zone.first_midnight + make_interval(hours => 24 * day_hours.n, mins => lower(day_hours.minutes)) as starts,
                     zone.first_midnight + make_interval(hours => 24 * day_hours.n, mins => upper(day_hours.minutes)) as ends,
                     zone.offsets[day_hours.n + 1] as offset_before,
                     zone.offsets[day_hours.n + 4] as offset_after,
                     (select c from unnest(zone.changes) as c
                       where c > zone.first_midnight + make_interval(hours => 24 * (day_hours.n - 1))
                         and c <= zone.first_midnight + make_interval(hours => 24 * (day_hours.n + 2))
                       limit 1) as change
            ) local
         ), '{}'::tstzmultirange) * tstzmultirange(tstzrange(p_from, p_to, '[)')) as ranges
    from unnest(p_rules) as rules
   cross join lateral (
     -- The window's local dates; the zone's offset at each local midnight from the day before the first to the one
     -- after the day after the last (local midnights read as UTC instants, as the offsets above compare them); the
     -- instants of the changes between them.
     select window_days.first_day, window_days.last_day, timezone('UTC', window_days.first_day::timestamp) as first_midnight, midnight.offsets,
            array(select zone_offset_change(rules.time_zone, timezone('UTC', k.at), timezone('UTC', k.at + interval '1 day'))
                    from generate_series(window_days.first_day::timestamp - interval '1 day', window_days.last_day::timestamp + interval '1 day', interval '1 day')
                         with ordinality as k(at, n)
                   where midnight.offsets[k.n] <> midnight.offsets[k.n + 1]) as changes
       from (select (p_from at time zone rules.time_zone)::date as first_day, (p_to at time zone rules.time_zone)::date as last_day) window_days
      cross join lateral (
        select array(select timezone(rules.time_zone, timezone('UTC', m.at)) - m.at
                       from generate_series(window_days.first_day::timestamp - interval '1 day', window_days.last_day::timestamp + interval '2 days',
                                            interval '1 day') as m(at)) as offsets
         offset 0
      ) midnight
      offset 0
   ) zone;
$$;
`,
);
