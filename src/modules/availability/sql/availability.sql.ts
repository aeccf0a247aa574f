import { namedStatement } from '../../../platform/db/statements.js';
import { freeBusyRuleSql } from '../../agents/index.js';
import type { Refusal } from '../../availability-rules/index.js';

/** The one row `availability` answers. */
export interface AvailabilityRow {
  /** Asked-for agents that do not share their free/busy with the caller, or do not exist; null when every one does. */
  refused: string[] | null;
  /** Whether the agents hold more booked slots inside the window than the bound (the starts are then not meaningful); null when refused. */
  crowded: boolean | null;
  /** Starts of the common free slots, earliest first, at most `limit`; null when refused. */
  starts: Date[] | null;
}

/**
 * Common free slots of the caller and other agents in one round trip, with the visibility rule and every agent's
 * availability rules in the same statement. Hand-written because it is range arithmetic the ORM cannot express, and
 * one statement (planned once per connection) is the whole request. The rules are read as the writers read them:
 * the same building blocks as `slot_refusals` (common_working_ranges, the live-slot test, the period counts), so a slot
 * listed here is one a writer would admit at this moment.
 *
 * - `asked`: each other agent, and whether it shares with the caller (the free/busy rule of the access
 *   table, agents/access.ts, written into the statement). An id that names no agent is refused the same
 *   way, so the answer does not tell whether an agent exists. One primary-key probe per id.
 * - Nothing below runs when one is refused (the `case` leaves its sub-selects unevaluated).
 * - `agent`: the caller and the others with their rules; the rules `bind` an agent other than the caller, and the
 *   caller only with `enforce_on_own_bookings`. Buffers bind everyone.
 * - `busy`: every agent's live slots whose blocked range reaches into the window once widened for a new booking of
 *   that agent (its buffer after below, its buffer before above: a new slot [s, e) blocks [s − before, e + after),
 *   which must miss every blocked range). Live: bookings, and holds that are live and not the caller's own (the
 *   holder sees its held time as its own). The exclusion constraint keeps one agent's blocked ranges disjoint, so
 *   in end order they are in start order too, and those reaching into [from, to) are found by two range scans of
 *   `booking_slots_agent_blocked_idx` per agent, index only. At most `maxBookedSlots + 1` in all, so a crowded
 *   window costs a bounded scan and is reported. Merged with `range_agg` into one multirange.
 * - `room`: the window, within the working time common to every agent the rules bind (common_working_ranges,
 *   evaluated once for all of them and inlined here; agents in one zone are intersected on the wall clock, before
 *   their hours become instants), minus `busy`; each of its ranges gives the starts whose slot fits in it,
 *   [lower, upper − duration].
 * - `starts`: those starts, within every bound agent's notice and advance ([now + notice, now + advance]), minus the
 *   local days and ISO weeks in which a bound agent with a limit already has that many live slots starting, read
 *   from its day counts (`agent_day_slots`), not counted.
 * - The grid `$3 + k·granularity` inside each range of `starts`, at most `limit` per range (none can contribute
 *   more), the first `limit` overall. `$3` is already on the grid (the service aligns it), so every start is.
 *
 * Ten agents with 500 slots each in a month of a 1,000-agent installation, no rules: about as many buffers as
 * before rules (two index-only scans per agent); with rules, one index range scan of about 35 day counts per agent
 * with a limit, and the working time of 31 days once per zone (bench S13: one zone).
 */
export const AVAILABILITY = namedStatement<
  [
    callerId: string,
    others: string[],
    from: Date,
    to: Date,
    durationMinutes: number,
    granularityMinutes: number,
    limit: number,
    maxBookedSlots: number,
    now: Date,
  ],
  AvailabilityRow
>(
  'availability',
  `with asked as materialized (
     select o.id, o.n,
            coalesce((
              select ${freeBusyRuleSql('$1::uuid', '(select caller.parent_id from agents caller where caller.id = $1::uuid)', 'a')}
                from agents a where a.id = o.id
            ), false) as shares
       from unnest($2::uuid[]) with ordinality as o(id, n)
   ), refusal as (
     select array_agg(id order by n) filter (where not shares) as refused from asked
   ), agent as materialized (
     select agent.id, r as rules, r.agent_id is not null and (agent.id <> $1::uuid or r.enforce_on_own_bookings) as binds,
            make_interval(mins => coalesce(r.buffer_before_minutes, 0)) as before,
            make_interval(mins => coalesce(r.buffer_after_minutes, 0)) as after
       from (select $1::uuid as id union all select id from asked) agent
       left join availability_rules r on r.agent_id = agent.id
      where (select refused from refusal) is null
   ), busy as (
     select range_agg(slot.busy) as ranges, count(*) > $8::int as crowded
       from (
         select tstzrange(slot.blocked_from - agent.after, slot.blocked_until + agent.before, '[)') as busy, slot.hold_id
           from agent
          cross join lateral (
            select s.blocked_from, s.blocked_until, s.hold_id from booking_slots s
             where s.agent_id = agent.id and s.blocked_until > $3::timestamptz - agent.before and s.blocked_until <= $4::timestamptz + agent.after
            union all
            select straddling.blocked_from, straddling.blocked_until, straddling.hold_id
              from (select s.blocked_from, s.blocked_until, s.hold_id from booking_slots s
                     where s.agent_id = agent.id and s.blocked_until > $4::timestamptz + agent.after
                     order by s.blocked_until limit 1) straddling
             where straddling.blocked_from < $4::timestamptz + agent.after
          ) slot
          limit $8::int + 1
       ) slot
      where slot.hold_id is null
         or exists (select 1 from holds h where h.id = slot.hold_id and h.expires_at > $9::timestamptz and h.confirmed_at is null
                                             and h.released_at is null and h.holder_agent_id <> $1::uuid)
   ), working as (
     select w.ranges
       from (select array_agg(agent.rules) as rules from agent where agent.binds) bound
      cross join lateral common_working_ranges(bound.rules, $3::timestamptz, $4::timestamptz) as w
   ), room as (
     select range_agg(tstzrange(lower(f.r), upper(f.r) - make_interval(mins => $5::int), '[]')) as starts
       from busy, working,
            unnest((tstzmultirange(tstzrange($3::timestamptz, $4::timestamptz, '[)')) * coalesce(working.ranges, '{(,)}'::tstzmultirange))
                   - coalesce(busy.ranges, '{}')) as f(r)
      where upper(f.r) - lower(f.r) >= make_interval(mins => $5::int)
   ), bounds as (
     -- A notice longer than the advance leaves no start (an empty range: tstzrange refuses bounds out of order).
     select range_intersect_agg(case when (agent.rules).minimum_notice_minutes <= coalesce((agent.rules).maximum_advance_days, 2147483647::bigint) * 1440
                                     then tstzrange($9::timestamptz + make_interval(mins => (agent.rules).minimum_notice_minutes),
                                                    $9::timestamptz + make_interval(days => (agent.rules).maximum_advance_days), '[]')
                                     else 'empty'::tstzrange end::tstzmultirange) as starts
       from agent where agent.binds
   ), full_period as (
     -- The local days and ISO weeks a bound agent's limit already fills with live slots starting in them, read from
     -- the agent's day counts (agent_day_slots, kept by triggers): the days of the weeks the window's starts lie in,
     -- one index range scan per agent with a limit. Slots without a hold are live, so a period whose booked slots reach
     -- the limit is full; one that only its held slots (live or expired) could fill is counted afresh, live slots only,
     -- like slot_refusals counts (one bounded index-only scan, as in busy).
     select range_agg(tstzrange(instants.from_at, instants.until_at, '[)')) as spans
       from agent
      cross join lateral (
        select ($3::timestamptz at time zone (agent.rules).time_zone)::date as first_day,
               (($4::timestamptz - make_interval(mins => $5::int)) at time zone (agent.rules).time_zone)::date as last_day
      ) days
      cross join lateral (
        select c.on_date::timestamp as local_start, interval '1 day' as length, (agent.rules).daily_limit as limit_count,
               c.booked::bigint as booked, (c.booked + c.held)::bigint as counted
          from agent_day_slots c
         where (agent.rules).daily_limit is not null and c.agent_id = agent.id and c.on_date between days.first_day and days.last_day
        union all
        select date_trunc('week', c.on_date::timestamp), interval '7 days', (agent.rules).weekly_limit, sum(c.booked), sum(c.booked + c.held)
          from agent_day_slots c
         where (agent.rules).weekly_limit is not null and c.agent_id = agent.id
           and c.on_date between date_trunc('week', days.first_day)::date and (date_trunc('week', days.last_day) + interval '6 days')::date
         group by 1
      ) filled
      cross join lateral (
        select filled.local_start at time zone (agent.rules).time_zone as from_at,
               (filled.local_start + filled.length) at time zone (agent.rules).time_zone as until_at
      ) instants
      where agent.binds and ((agent.rules).daily_limit is not null or (agent.rules).weekly_limit is not null)
        and filled.counted >= filled.limit_count
        and (filled.booked >= filled.limit_count
             or (select count(*)
                   from (select s.starts_at, s.hold_id from booking_slots s
                          where s.agent_id = agent.id and s.blocked_until > instants.from_at and s.blocked_until <= instants.until_at
                         union all
                         select straddling.starts_at, straddling.hold_id
                           from (select s.starts_at, s.blocked_from, s.hold_id from booking_slots s
                                  where s.agent_id = agent.id and s.blocked_until > instants.until_at order by s.blocked_until limit 1) straddling
                          where straddling.blocked_from < instants.until_at) started
                  where started.starts_at >= instants.from_at and started.starts_at < instants.until_at
                    and (started.hold_id is null or slot_is_live(started.hold_id, $9::timestamptz))) >= filled.limit_count)
   ), allowed as (
     select (coalesce(room.starts, '{}') * coalesce(bounds.starts, '{(,)}'::tstzmultirange)) - coalesce(full_period.spans, '{}') as starts
       from room, bounds, full_period
   )
   select refusal.refused,
          case when refusal.refused is null then (select crowded from busy) end as crowded,
          case when refusal.refused is null then array(
            select start
              from allowed, unnest(allowed.starts) as a(r)
             cross join lateral (
               select $3::timestamptz + make_interval(mins => $6::int * greatest(0, ceil(extract(epoch from lower(a.r) - $3::timestamptz) / ($6::int * 60)))::int) as first_start
             ) grid
             cross join lateral generate_series(
               grid.first_start,
               least(upper(a.r), grid.first_start + make_interval(mins => $6::int * ($7::int - 1))),
               make_interval(mins => $6::int)
             ) as start
             where a.r @> start
             order by start
             limit $7::int
          ) end as starts
     from refusal`,
  { servedByReplica: true },
);

/**
 * "Why not this slot": the reasons `slot_refusals` gives for [startsAt, endsAt) on one agent's calendar, when the
 * caller may see its free/busy (the same rule as above); `visible` false (an agent that does not share, or no such
 * agent) answers nothing else.
 */
export const SLOT_CHECK = namedStatement<
  [callerId: string, agentId: string, startsAt: Date, endsAt: Date, now: Date, maxReasons: number],
  { visible: boolean; reasons: Refusal[] | null }
>(
  'slot_check',
  `select coalesce(seen.visible, false) as visible,
          case when seen.visible then slot_refusals($1::uuid, $2::uuid, array[tstzrange($3::timestamptz, $4::timestamptz, '[)')], $5::timestamptz, null, $6::int) end
            as reasons
     from (select 1) one
     left join lateral (
       select ${freeBusyRuleSql('$1::uuid', '(select caller.parent_id from agents caller where caller.id = $1::uuid)', 'a')} as visible
         from agents a where a.id = $2::uuid
     ) seen on true`,
);
