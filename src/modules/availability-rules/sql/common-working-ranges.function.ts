import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The working time common to several agents inside [p_from, p_to): the instants inside the working time of every
 * rules row given, as one row with one multirange (null when no rules are given). The one definition of "working
 * time" that availability, slot_refusals and the writers use (agent_working_ranges is this for one agent).
 *
 * An agent's working time: for every local date of the window, that date's override (an empty one: a day off), else
 * the weekly hours of its ISO weekday, else (no weekly hours) the whole day; an interval is the instants whose
 * wall-clock time in the rules' zone lies in it. Away from a daylight-saving change that is one range, the local
 * times read with the zone's offset. Around a change the offset before applies until the change and the one after
 * from it, so a wall-clock time the change skips (a skipped 00:15) starts working time at the change, the first
 * minute that exists (PostgreSQL's own reading, with the offset before the gap, put it a quarter of an hour past the
 * change), and an hour the change repeats is working time on both passes. "Around" is the three local days from the
 * day before the interval's to the day after (real zones change at most once in three days): when the offsets at
 * their ends agree, the interval is read with that offset.
 *
 * Agents in one zone are intersected on the wall clock, before their hours become instants: one local date's reading
 * (a shift by the offset, or by the offsets before and after a change on either side of it) maps the common part of
 * the agents' hours to the common part of their instants, and different dates map to different instants, so this is
 * the intersection of each agent's working time. A month of ten agents in one zone is then some 50 intervals read as
 * instants instead of 500, and the zone's offsets and changes are read once instead of once per agent (S13's data in
 * test/measure/availability-rules.ts: the availability statement's CPU 5.9 → 4.75 ms, S8's 4.3). Per zone: each
 * ISO weekday's hours common to its agents (seven rows), and for the dates some agent of the zone overrides (usually
 * none), every agent's hours that date; the window's dates take the one or the other.
 *
 * Cheap per interval: the zone's offset is read once per local midnight of the window, a change's instant is found
 * once (zone_offset_change), not for every interval next to it, and an interval's instants are arithmetic from the
 * first midnight's (no zone looked up per interval). A plain SQL function returning a table, so PostgreSQL inlines it
 * into the statement that calls it.
 */
export const commonWorkingRangesFunction = sqlDefinition(
  'common_working_ranges',
  `
create or replace function common_working_ranges(p_rules availability_rules[], p_from timestamptz, p_to timestamptz)
returns table (ranges tstzmultirange) language sql stable as $$
  select range_intersect_agg(per_zone.ranges)
    from (select distinct rules.time_zone from unnest(p_rules) as rules) as zone_of
   cross join lateral (
     -- The window's local dates in the zone; its offset at each local midnight from the day before the first to the
     -- one after the day after the last (local midnights read as UTC instants, as the offsets below compare them); the
     -- instants of the changes between them.
     select window_days.first_day, window_days.last_day, timezone('UTC', window_days.first_day::timestamp) as first_midnight, midnight.offsets,
            array(select zone_offset_change(zone_of.time_zone, timezone('UTC', k.at), timezone('UTC', k.at + interval '1 day'))
                    from generate_series(window_days.first_day::timestamp - interval '1 day', window_days.last_day::timestamp + interval '1 day', interval '1 day')
                         with ordinality as k(at, n)
                   where midnight.offsets[k.n] <> midnight.offsets[k.n + 1]) as changes
       from (select (p_from at time zone zone_of.time_zone)::date as first_day, (p_to at time zone zone_of.time_zone)::date as last_day) window_days
      cross join lateral (
        select array(select timezone(zone_of.time_zone, timezone('UTC', m.at)) - m.at
                       from generate_series(window_days.first_day::timestamp - interval '1 day', window_days.last_day::timestamp + interval '2 days',
                                            interval '1 day') as m(at)) as offsets
         offset 0
      ) midnight
      offset 0
   ) zone
   cross join lateral (
     select coalesce((
       with weekly as materialized (
         -- Each ISO weekday's hours common to the zone's agents (no weekly hours: the whole day).
         select w.isodow::int as isodow, range_intersect_agg(coalesce(w.hours, '{[0,1440)}'::int4multirange)) as hours
           from unnest(p_rules) as rules
          cross join lateral unnest(coalesce(rules.weekly_hours, array_fill(null::int4multirange, array[7]))) with ordinality as w(hours, isodow)
          where rules.time_zone = zone_of.time_zone
          group by w.isodow
       ), overridden as materialized (
         -- The window's dates some agent of the zone overrides, and each agent's hours that date, intersected.
         select overridden_on.on_date,
                range_intersect_agg(coalesce(o.hours, rules.weekly_hours[extract(isodow from overridden_on.on_date)::int], '{[0,1440)}'::int4multirange)) as hours
           from (select distinct o.on_date
                   from unnest(p_rules) as rules
                   join availability_overrides o on o.agent_id = rules.agent_id and o.on_date between zone.first_day and zone.last_day
                  where rules.time_zone = zone_of.time_zone) overridden_on
          cross join unnest(p_rules) as rules
           left join availability_overrides o on o.agent_id = rules.agent_id and o.on_date = overridden_on.on_date
          where rules.time_zone = zone_of.time_zone
          group by overridden_on.on_date
       )
       select range_agg(
                case when local.offset_before = local.offset_after
                     then tstzmultirange(tstzrange(local.starts - local.offset_before, local.ends - local.offset_before, '[)'))
                     else tstzmultirange(tstzrange(local.starts - local.offset_before, local.ends - local.offset_before, '[)') * tstzrange(null, local.change, '[)'))
                        + tstzmultirange(tstzrange(local.starts - local.offset_after, local.ends - local.offset_after, '[)') * tstzrange(local.change, null, '[)')) end)
         from (
           -- n: the date's place in the window (0 for the first).
           select d.n, coalesce(overridden.hours, weekly.hours) as hours
             from generate_series(0, zone.last_day - zone.first_day) as d(n)
             join weekly on weekly.isodow = extract(isodow from zone.first_day + d.n)::int
             left join overridden on overridden.on_date = zone.first_day + d.n
         ) day_hours
        cross join lateral unnest(day_hours.hours) as h(minutes)
        cross join lateral (
          -- The interval's wall-clock times read as UTC instants (plain arithmetic from the first midnight's: a day is
          -- 24 hours there), the offsets at the midnights beginning the day before and ending the day after, and (only
          -- read when they differ) the change between them.
          select zone.first_midnight + make_interval(hours => 24 * day_hours.n, mins => lower(h.minutes)) as starts,
                 zone.first_midnight + make_interval(hours => 24 * day_hours.n, mins => upper(h.minutes)) as ends,
                 zone.offsets[day_hours.n + 1] as offset_before,
                 zone.offsets[day_hours.n + 4] as offset_after,
                 (select c from unnest(zone.changes) as c
                   where c > zone.first_midnight + make_interval(hours => 24 * (day_hours.n - 1))
                     and c <= zone.first_midnight + make_interval(hours => 24 * (day_hours.n + 2))
                   limit 1) as change
        ) local
     ), '{}'::tstzmultirange) * tstzmultirange(tstzrange(p_from, p_to, '[)')) as ranges
   ) per_zone;
$$;
`,
);
