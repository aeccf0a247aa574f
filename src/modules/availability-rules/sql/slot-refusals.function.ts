import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Why candidate slots cannot be taken on an agent's calendar by `p_caller`: the one evaluation behind the writers
 * (each refuses with the first reason), the "why not this slot" answer, and, through the same building blocks
 * (agent_working_ranges, live_slot), availability. A JSON array, at most `p_max` reasons, in the order
 * writers refuse by (then by time):
 *
 * - `slot_taken`: a confirmed booking (`bookingId`) or a live hold (`holdId`, `heldByCaller`) overlaps the slot;
 * - `buffer_conflict`: only the buffers overlap (the slot widened by the agent's buffers, or theirs);
 * - `outside_working_hours`, `notice_too_short` (`earliestStartsAt`), `too_far_ahead` (`latestStartsAt`),
 *   `daily_limit_reached` (`limit`, local `date`), `weekly_limit_reached` (`limit`, local Monday `weekOf`).
 *
 * Overlaps and buffers bind everyone (the exclusion constraint holds them); the other rules bind others, and the
 * agent itself only with `enforce_on_own_bookings`. `p_ignore`: a booking left out (the one being moved or
 * confirmed). Limits count the agent's live slots starting on the local day (week) plus the candidates there.
 * Each reason names the candidate it concerns (`startsAt`).
 *
 * Always the generic plan: PostgreSQL estimates `unnest(p_slots)` at ten rows in it and one in a custom plan, so it
 * kept planning the statement below afresh on every call (most of what a create for an agent with rules cost).
 */
export const slotRefusalsFunction = sqlDefinition(
  'slot_refusals',
  `
create or replace function slot_refusals(p_caller uuid, p_agent uuid, p_slots tstzrange[], p_at timestamptz, p_ignore uuid, p_max int)
returns jsonb language plpgsql stable set plan_cache_mode = force_generic_plan as $$
declare
  r availability_rules;
  v_binds boolean;
  v_before interval;
  v_after interval;
  v_reasons jsonb;
begin
  select * into r from availability_rules where agent_id = p_agent;
  v_binds := r.agent_id is not null and (p_caller is distinct from p_agent or r.enforce_on_own_bookings);
  v_before := make_interval(mins => coalesce(r.buffer_before_minutes, 0));
  v_after := make_interval(mins => coalesce(r.buffer_after_minutes, 0));
  with candidate as (
    select c.slot, lower(c.slot) as starts_at, tstzrange(lower(c.slot) - v_before, upper(c.slot) + v_after, '[)') as blocked
      from unnest(p_slots) as c(slot)
  ), conflict as (
    select 1 as rank, candidate.starts_at,
           case when tstzrange(x.starts_at, x.ends_at, '[)') && candidate.slot then 'slot_taken' else 'buffer_conflict' end as code,
           case when x.hold_id is null then jsonb_build_object('bookingId', x.booking_id)
                else jsonb_build_object('holdId', x.hold_id, 'heldByCaller', x.holder_agent_id = p_caller) end as detail
      from candidate
     cross join lateral (
       select s.booking_id, s.starts_at, s.ends_at, s.hold_id, h.holder_agent_id
         from booking_slots s left join holds h on h.id = s.hold_id
        where s.agent_id = p_agent and tstzrange(s.blocked_from, s.blocked_until, '[)') && candidate.blocked
          and s.booking_id is distinct from p_ignore
          and (s.hold_id is null or (h.expires_at > p_at and h.confirmed_at is null and h.released_at is null))
        order by s.starts_at
        limit p_max
     ) x
  ), working as (
    select agent_working_ranges(r, min(lower(slot)), max(upper(slot))) as ranges from candidate where v_binds
  ), timing as (
    select 2 as rank, candidate.starts_at, 'outside_working_hours' as code, '{}'::jsonb as detail
      from candidate, working where v_binds and not working.ranges @> candidate.slot
    union all
    select 3, candidate.starts_at, 'notice_too_short', jsonb_build_object('earliestStartsAt', iso_instant(p_at + make_interval(mins => r.minimum_notice_minutes)))
      from candidate where v_binds and candidate.starts_at < p_at + make_interval(mins => r.minimum_notice_minutes)
    union all
    select 4, candidate.starts_at, 'too_far_ahead', jsonb_build_object('latestStartsAt', iso_instant(p_at + make_interval(days => r.maximum_advance_days)))
      from candidate where v_binds and candidate.starts_at > p_at + make_interval(days => r.maximum_advance_days)
  ), period as (
    -- The local day and ISO week of each candidate, as instants (midnight read by the rule above).
    select candidate.starts_at, p.kind, p.period_start, p.period_start at time zone r.time_zone as from_at,
           (p.period_start + p.length) at time zone r.time_zone as until_at, p.limit_count
      from candidate
     cross join lateral (
       select 'day' as kind, date_trunc('day', candidate.starts_at at time zone r.time_zone) as period_start, interval '1 day' as length,
              r.daily_limit as limit_count
       union all
       select 'week', date_trunc('week', candidate.starts_at at time zone r.time_zone), interval '7 days', r.weekly_limit
     ) p
     where v_binds and p.limit_count is not null
  ), over_limit as (
    select 5 + (kind = 'week')::int as rank, min(starts_at) filter (where over) as starts_at,
           case kind when 'day' then 'daily_limit_reached' else 'weekly_limit_reached' end as code,
           case kind when 'day' then jsonb_build_object('limit', limit_count, 'date', period_start::date)
                else jsonb_build_object('limit', limit_count, 'weekOf', period_start::date) end as detail
      from (
        select period.*, (count(*) over (partition by kind, period_start order by starts_at) + (
                 select count(*) from booking_slots s left join holds h on h.id = s.hold_id
                  where s.agent_id = p_agent and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange(period.from_at, period.until_at, '[)')
                    and s.starts_at >= period.from_at and s.starts_at < period.until_at
                    and s.booking_id is distinct from p_ignore
                    and (s.hold_id is null or (h.expires_at > p_at and h.confirmed_at is null and h.released_at is null)))) > limit_count as over
          from period
      ) counted
     group by kind, period_start, limit_count
    having bool_or(over)
  )
  select coalesce(jsonb_agg(jsonb_build_object('code', code, 'startsAt', iso_instant(starts_at)) || detail
                            order by rank, starts_at), '[]'::jsonb)
    into v_reasons
    from (select * from (select * from conflict union all select * from timing union all select * from over_limit) every_reason
           order by rank, starts_at limit p_max) first_reasons;
  return v_reasons;
end
$$;
`,
);
