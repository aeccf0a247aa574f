import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Keeps `agent_day_slots` (migration 20261127010000) equal to the slots of an agent with rules starting on each
 * local day of its zone, split into those without a hold (`booked`) and those of holds (`held`), whichever writer
 * inserts, deletes or moves a slot, or confirms a held one. An agent without rules has no rows and costs one lookup
 * of its rules. Each change is one `update … set n = n ± 1` (or an upsert) of the day's row, which PostgreSQL
 * serializes by that row's lock: exact under concurrent writers.
 */
export const countDaySlotsTrigger = sqlDefinition(
  'count_day_slots',
  `
create or replace function count_day_slots() returns trigger language plpgsql as $$
declare
  v_zone text;
begin
  if tg_op <> 'INSERT' then
    select r.time_zone into v_zone from availability_rules r where r.agent_id = old.agent_id;
    if v_zone is not null then
      update agent_day_slots
         set booked = booked - (old.hold_id is null)::int, held = held - (old.hold_id is not null)::int
       where agent_id = old.agent_id and on_date = (old.starts_at at time zone v_zone)::date;
    end if;
  end if;
  if tg_op <> 'DELETE' then
    select r.time_zone into v_zone from availability_rules r where r.agent_id = new.agent_id;
    if v_zone is not null then
      insert into agent_day_slots as c (agent_id, on_date, booked, held)
      values (new.agent_id, (new.starts_at at time zone v_zone)::date, (new.hold_id is null)::int, (new.hold_id is not null)::int)
      on conflict (agent_id, on_date) do update set booked = c.booked + excluded.booked, held = c.held + excluded.held;
    end if;
  end if;
  return null;
end;
$$;

create or replace trigger booking_slots_count_days after insert or delete on booking_slots
  for each row execute function count_day_slots();

create or replace trigger booking_slots_count_days_changes after update of agent_id, starts_at, hold_id on booking_slots
  for each row
  when (old.agent_id is distinct from new.agent_id or old.starts_at is distinct from new.starts_at or (old.hold_id is null) <> (new.hold_id is null))
  execute function count_day_slots();
`,
);

/**
 * Counts an agent's days afresh when its rules appear or change zone (its days are then other days). Under the
 * agent's row lock, which every calendar writer holds while it writes: no slot of the agent is written meanwhile,
 * and a writer waiting for the lock reads the new zone once it has it (each statement of a trigger reads afresh).
 */
export const countDaySlotsAfreshTrigger = sqlDefinition(
  'count_day_slots_afresh',
  `
create or replace function count_day_slots_afresh() returns trigger language plpgsql as $$
begin
  perform 1 from agents where id = new.agent_id for no key update;
  delete from agent_day_slots where agent_id = new.agent_id;
  insert into agent_day_slots (agent_id, on_date, booked, held)
  select s.agent_id, (s.starts_at at time zone new.time_zone)::date,
         count(*) filter (where s.hold_id is null), count(*) filter (where s.hold_id is not null)
    from booking_slots s
   where s.agent_id = new.agent_id
   group by 1, 2;
  return null;
end;
$$;

create or replace trigger availability_rules_count_days after insert on availability_rules
  for each row execute function count_day_slots_afresh();

create or replace trigger availability_rules_count_days_changes after update of time_zone on availability_rules
  for each row when (old.time_zone is distinct from new.time_zone) execute function count_day_slots_afresh();
`,
);
