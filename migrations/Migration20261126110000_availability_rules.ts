import { Migration } from '@mikro-orm/migrations';

/**
 * Availability rules per agent (issue 27): weekly working hours in the agent's IANA zone, date overrides, buffers,
 * minimum notice, maximum advance, limits per day and per week, and whether they bind the agent's own creates.
 * An agent without a row has no rules and behaves as before.
 *
 * Hours are minutes of the local day as `int4multirange`s, so intervals of one day can never overlap in storage:
 * `weekly_hours[1..7]` (ISO weekday, Monday first; null: no weekly hours, every day is open unless overridden) and
 * one override row per date (an empty multirange: the day is off). Their evaluation is
 * `agent_working_ranges()` (availability-rules/sql).
 */
export class Migration20261126110000_availability_rules extends Migration {
  override up(): void {
    this.addSql(`
      create table availability_rules (
        agent_id uuid primary key constraint availability_rules_agent_id_foreign references agents (id) on update cascade on delete cascade,
        time_zone text not null,
        weekly_hours int4multirange[] null,
        buffer_before_minutes integer not null default 0,
        buffer_after_minutes integer not null default 0,
        minimum_notice_minutes integer not null default 0,
        maximum_advance_days integer null,
        daily_limit integer null,
        weekly_limit integer null,
        enforce_on_own_bookings boolean not null default false,
        updated_at timestamptz not null,
        -- A zone PostgreSQL cannot read is refused here too (timezone() raises), not only by the service.
        constraint availability_rules_time_zone_check check (timezone(time_zone, timestamptz '2000-01-01 00:00Z') is not null),
        constraint availability_rules_weekly_hours_check check (
          weekly_hours is null or (array_length(weekly_hours, 1) = 7 and array_lower(weekly_hours, 1) = 1
                                   and '{[0,1440)}'::int4multirange @> all (weekly_hours))),
        constraint availability_rules_buffers_check check (buffer_before_minutes >= 0 and buffer_before_minutes <= 720 and buffer_after_minutes >= 0 and buffer_after_minutes <= 720),
        constraint availability_rules_notice_check check (minimum_notice_minutes >= 0 and minimum_notice_minutes <= 43200),
        constraint availability_rules_advance_check check (maximum_advance_days >= 1 and maximum_advance_days <= 1095),
        constraint availability_rules_limits_check check (daily_limit >= 1 and daily_limit <= 1000 and weekly_limit >= 1 and weekly_limit <= 5000)
      );`);
    this.addSql(`
      create table availability_overrides (
        agent_id uuid not null constraint availability_overrides_agent_id_foreign references availability_rules (agent_id) on delete cascade,
        on_date date not null,
        hours int4multirange not null,
        primary key (agent_id, on_date),
        constraint availability_overrides_hours_check check ('{[0,1440)}'::int4multirange @> hours)
      );`);
  }
}
