import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Whether slot_refusals would certainly find nothing to refuse in one candidate slot, checked cheaply: the question a
 * single create asks of an agent with rules, most of the time with "yes". False means only "ask slot_refusals" (which
 * then names the reason, or admits the slot after all); true is never given where slot_refusals would refuse:
 *
 * - nothing blocked in the way of the slot widened by the buffers (any slot, even an expired hold's or `p_ignore`'s:
 *   stricter than the overlap and buffer rules);
 * - where the rules bind the caller: notice, advance, and inside working time: for a slot within one local day with
 *   no change of offset from the day before to the day after (where common_working_ranges reads the day with one offset),
 *   its wall-clock minutes inside one of the day's intervals; otherwise agent_working_ranges over the slot;
 * - limits from the day counts (agent_day_slots): the slots starting on the slot's local day (ISO week), expired holds
 *   and `p_ignore` included, so at least the live ones slot_refusals counts, plus the slot itself, within the limit.
 *   slot_refusals counts the slots starting between the period's local midnights read as instants: when the midnight
 *   that ends the period is repeated (a change back to standard time at 01:00, as in Havana), slots of the next day
 *   start before it, so such a period is left to slot_refusals.
 *
 * Several candidates (a series) always go to slot_refusals. Always the generic plan (see slot_refusals).
 */
export const slotAdmittedFunction = sqlDefinition(
  'slot_admitted',
  `
create or replace function slot_admitted(p_caller uuid, p_rules availability_rules, p_slots tstzrange[], p_at timestamptz, p_ignore uuid)
returns boolean language plpgsql stable set plan_cache_mode = force_generic_plan as $$
declare
  v_slot tstzrange;
  v_day date;
  v_local_start timestamp;
  v_local_end timestamp;
  v_hours int4multirange;
  v_period_end timestamptz;
  v_counted bigint;
begin
  if cardinality(p_slots) <> 1 then return false; end if;
  v_slot := p_slots[1];
  if exists (select 1 from booking_slots s
              where s.agent_id = p_rules.agent_id
                and tstzrange(s.blocked_from, s.blocked_until, '[)')
                    && tstzrange(lower(v_slot) - make_interval(mins => p_rules.buffer_before_minutes),
                                 upper(v_slot) + make_interval(mins => p_rules.buffer_after_minutes), '[)')) then
    return false;
  end if;
  if p_caller = p_rules.agent_id and not p_rules.enforce_on_own_bookings then return true; end if;
  if lower(v_slot) < p_at + make_interval(mins => p_rules.minimum_notice_minutes)
     or lower(v_slot) > p_at + make_interval(days => p_rules.maximum_advance_days) then
    return false;
  end if;
  v_local_start := lower(v_slot) at time zone p_rules.time_zone;
  v_local_end := upper(v_slot) at time zone p_rules.time_zone;
  v_day := v_local_start::date;
  if v_local_end <= (v_day + 1)::timestamp
     and timezone(p_rules.time_zone, timezone('UTC', (v_day - 1)::timestamp)) - (v_day - 1)::timestamp
         = timezone(p_rules.time_zone, timezone('UTC', (v_day + 2)::timestamp)) - (v_day + 2)::timestamp then
    -- Inside one local day with no change of offset from the day before to the day after: common_working_ranges reads
    -- that day's intervals with one offset, so the slot is working time when its wall-clock minutes lie in one of them.
    select o.hours into v_hours from availability_overrides o where o.agent_id = p_rules.agent_id and o.on_date = v_day;
    if not found then v_hours := coalesce(p_rules.weekly_hours[extract(isodow from v_day)::int], '{[0,1440)}'::int4multirange); end if;
    if not v_hours @> int4range(floor(extract(epoch from v_local_start - v_day) / 60)::int, ceil(extract(epoch from v_local_end - v_day) / 60)::int) then
      return false;
    end if;
  elsif not agent_working_ranges(p_rules, lower(v_slot), upper(v_slot)) @> v_slot then
    return false;
  end if;
  if p_rules.daily_limit is not null then
    v_period_end := (v_day + 1)::timestamp at time zone p_rules.time_zone;
    if ((v_period_end - interval '1 second') at time zone p_rules.time_zone)::date <> v_day then return false; end if;
    select coalesce(sum(c.booked + c.held), 0) into v_counted from agent_day_slots c where c.agent_id = p_rules.agent_id and c.on_date = v_day;
    if v_counted + 1 > p_rules.daily_limit then return false; end if;
  end if;
  if p_rules.weekly_limit is not null then
    v_day := date_trunc('week', v_day)::date;
    v_period_end := (v_day + 7)::timestamp at time zone p_rules.time_zone;
    if ((v_period_end - interval '1 second') at time zone p_rules.time_zone)::date <> v_day + 6 then return false; end if;
    select coalesce(sum(c.booked + c.held), 0) into v_counted from agent_day_slots c
     where c.agent_id = p_rules.agent_id and c.on_date between v_day and v_day + 6;
    if v_counted + 1 > p_rules.weekly_limit then return false; end if;
  end if;
  return true;
end
$$;
`,
);
