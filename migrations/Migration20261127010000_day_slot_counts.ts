import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 27, limits without counting: for each agent with availability rules, the slots starting on each local day
 * of its zone (`agent_day_slots`), so that availability reads a month's daily and weekly limits from a few dozen rows
 * instead of counting every slot of every agent asked about (bench S13: the count was most of the statement).
 *
 * `booked` counts slots without a hold (a booking's, always live); `held` the slots of holds, live or expired until
 * a writer purges them, so it is an upper bound of the live ones and readers count a period's slots afresh only when
 * held slots may decide it. Kept exact by triggers (availability-rules/sql/day-slot-counts.trigger.ts): every insert,
 * delete and move of a slot, and a recount of the agent's days when its rules appear or change zone. Rows go with
 * the rules (an agent without rules has none). The agents that have rules are counted here.
 *
 * Working time is now read by working_ranges_of, which finds a zone's change once per window (zone_offset_change)
 * instead of once per interval next to it: local_time_range goes.
 */
export class Migration20261127010000_day_slot_counts extends Migration {
  override up(): void {
    this.addSql(`
      create table agent_day_slots (
        agent_id uuid not null constraint agent_day_slots_agent_id_foreign references availability_rules (agent_id) on delete cascade,
        on_date date not null,
        booked integer not null default 0,
        held integer not null default 0,
        primary key (agent_id, on_date),
        constraint agent_day_slots_counts_check check (booked >= 0 and held >= 0)
      );`);
    this.addSql(`
      insert into agent_day_slots (agent_id, on_date, booked, held)
      select s.agent_id, (s.starts_at at time zone r.time_zone)::date,
             count(*) filter (where s.hold_id is null), count(*) filter (where s.hold_id is not null)
        from booking_slots s join availability_rules r on r.agent_id = s.agent_id
       group by 1, 2;`);
    this.addSql('drop function if exists local_time_range(text, timestamp, timestamp);');
  }
}
