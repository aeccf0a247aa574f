import { namedStatement } from '../../../platform/db/statements.js';

/** The one row `availability` answers. */
export interface AvailabilityRow {
  /** Asked-for agents that do not share their free/busy with the caller, or do not exist; null when every one does. */
  refused: string[] | null;
  /** Whether some agent has more booked slots inside the window than the bound (the slots are then not meaningful); null when refused. */
  crowded: boolean | null;
  /** Starts of the common free slots, earliest first, at most `limit`; null when refused. */
  starts: Date[] | null;
}

/**
 * Common free slots of the caller and other agents in one round trip, with the visibility rule in the
 * same statement. Hand-written because it is range arithmetic the ORM cannot express, and one
 * statement (planned once per connection) is the whole request:
 *
 * - `asked`: each other agent, and whether it shares with the caller: `anyone`; `family` when the
 *   caller is its parent or its child; `nobody` never. An id that names no agent is refused the same
 *   way, so the answer does not tell whether an agent exists.
 * - Nothing below runs when one is refused (the `case` leaves the sub-selects unevaluated).
 * - `calendars`: each agent's slots overlapping the window, one probe per agent of the exclusion
 *   constraint's GiST index on (agent_id, range): the cost follows the window, not the agent's past
 *   (as `bookings_overlapping` does on bookings). `booking_slots` is what the exclusion constraint
 *   sees: confirmed bookings and their materialised occurrences, minus cancellations and EXDATEs.
 *   At most `maxSlotsPerAgent + 1` per agent, so a crowded calendar costs a bounded scan and is reported.
 * - `free`: the window minus the union of every agent's slots (`range_agg` into a multirange, fed in
 *   start order so its own sort finds the input sorted), split back into maximal free ranges.
 * - Candidate starts: the grid `$3 + k·granularity` inside each free range while the slot still fits
 *   (`start + duration <= upper`), at most `limit` per range (none can contribute more), the first
 *   `limit` overall. `$3` is already on the grid (the service aligns it), so every start is.
 */
export const AVAILABILITY = namedStatement<
  [callerId: string, others: string[], from: Date, to: Date, durationMinutes: number, granularityMinutes: number, limit: number, maxSlotsPerAgent: number],
  AvailabilityRow
>(
  'availability',
  `with asked as materialized (
     select o.id, o.n,
            a.id is not null and (
              a.free_busy_visibility = 'anyone'
              or (a.free_busy_visibility = 'family'
                  and (a.parent_id = $1::uuid or a.id = (select caller.parent_id from agents caller where caller.id = $1::uuid)))
            ) as shares
       from unnest($2::uuid[]) with ordinality as o(id, n)
       left join agents a on a.id = o.id
   ), refusal as (
     select array_agg(id order by n) filter (where not shares) as refused from asked
   ), calendars as (
     select agent.id, slot.starts_at, slot.ends_at
       from (select $1::uuid as id union all select id from asked) agent
      cross join lateral (
        select s.starts_at, s.ends_at from booking_slots s
         where s.agent_id = agent.id and tstzrange(s.starts_at, s.ends_at, '[)') && tstzrange($3::timestamptz, $4::timestamptz, '[)')
         limit $8::int + 1
      ) slot
   ), free as (
     select f.r
       from unnest(tstzmultirange(tstzrange($3::timestamptz, $4::timestamptz, '[)'))
                   - coalesce((select range_agg(tstzrange(starts_at, ends_at, '[)') order by starts_at) from calendars), '{}')) as f(r)
   )
   select refusal.refused,
          case when refusal.refused is null then
            (select coalesce(bool_or(n > $8::int), false) from (select count(*) as n from calendars group by id) per_agent)
          end as crowded,
          case when refusal.refused is null then array(
            select start
              from free
             cross join lateral (
               select $3::timestamptz + make_interval(mins => $6::int * ceil(extract(epoch from lower(free.r) - $3::timestamptz) / ($6::int * 60))::int) as first_start
             ) grid
             cross join lateral generate_series(
               grid.first_start,
               least(upper(free.r) - make_interval(mins => $5::int), grid.first_start + make_interval(mins => $6::int * ($7::int - 1))),
               make_interval(mins => $6::int)
             ) as start
             order by start
             limit $7::int
          ) end as starts
     from refusal`,
);
