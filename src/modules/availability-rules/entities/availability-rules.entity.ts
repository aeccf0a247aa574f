import { Check, Entity, ManyToOne, OneToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';

/**
 * An agent's availability rules (one row at most; none: no rules). Hours are minutes of the local day as
 * `int4multirange` text; `weeklyHours` has seven (ISO weekday, Monday first) or is null (no weekly hours).
 * Read and written by the rules service; evaluated by the SQL of availability-rules/sql.
 */
@Entity({ tableName: 'availability_rules' })
@Check({ name: 'availability_rules_time_zone_check', expression: "timezone(time_zone, '2000-01-01 00:00:00+00'::timestamp with time zone) is not null" })
@Check({
  name: 'availability_rules_weekly_hours_check',
  expression:
    "weekly_hours is null or (array_length(weekly_hours, 1) = 7 and array_lower(weekly_hours, 1) = 1 and '{[0,1440)}'::int4multirange @> all (weekly_hours))",
})
@Check({ name: 'availability_rules_buffers_check', expression: 'buffer_before_minutes >= 0 and buffer_before_minutes <= 720 and buffer_after_minutes >= 0 and buffer_after_minutes <= 720' })
@Check({ name: 'availability_rules_notice_check', expression: 'minimum_notice_minutes >= 0 and minimum_notice_minutes <= 43200' })
@Check({ name: 'availability_rules_advance_check', expression: 'maximum_advance_days >= 1 and maximum_advance_days <= 1095' })
@Check({ name: 'availability_rules_limits_check', expression: 'daily_limit >= 1 and daily_limit <= 1000 and weekly_limit >= 1 and weekly_limit <= 5000' })
export class AvailabilityRules {
  @OneToOne(() => Agent, { primary: true, deleteRule: 'cascade', fieldName: 'agent_id', owner: true })
  agent!: Agent;

  @Property({ type: 'text' })
  timeZone!: string;

  @Property({ type: 'text[]', columnType: 'int4multirange[]', nullable: true })
  weeklyHours: string[] | null = null;

  @Property({ type: 'integer', default: 0 })
  bufferBeforeMinutes = 0;

  @Property({ type: 'integer', default: 0 })
  bufferAfterMinutes = 0;

  @Property({ type: 'integer', default: 0 })
  minimumNoticeMinutes = 0;

  @Property({ type: 'integer', nullable: true })
  maximumAdvanceDays: number | null = null;

  @Property({ type: 'integer', nullable: true })
  dailyLimit: number | null = null;

  @Property({ type: 'integer', nullable: true })
  weeklyLimit: number | null = null;

  @Property({ type: 'boolean', default: false })
  enforceOnOwnBookings = false;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  updatedAt!: Date;
}

/** A date whose hours replace its weekday's (an empty multirange: the day is off). */
@Entity({ tableName: 'availability_overrides' })
@Check({ name: 'availability_overrides_hours_check', expression: "'{[0,1440)}'::int4multirange @> hours" })
export class AvailabilityOverride {
  @ManyToOne(() => AvailabilityRules, { primary: true, deleteRule: 'cascade', fieldName: 'agent_id' })
  rules!: AvailabilityRules;

  @PrimaryKey({ type: 'string', columnType: 'date' })
  onDate!: string;

  @Property({ type: 'text', columnType: 'int4multirange' })
  hours!: string;
}
