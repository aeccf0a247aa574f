import { Directive, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import { RULE_LIMITS as L, type AvailabilityRulesView, type Weekday } from '../rules.view.js';

export enum WeekdayValue {
  monday = 'monday',
  tuesday = 'tuesday',
  wednesday = 'wednesday',
  thursday = 'thursday',
  friday = 'friday',
  saturday = 'saturday',
  sunday = 'sunday',
}
registerEnumType(WeekdayValue, { name: 'Weekday', description: 'An ISO weekday, spelt as REST and MCP spell it.' });

@ObjectType('HoursInterval', { simpleResolvers: true, description: '[start, end) on the agent’s local wall clock, HH:MM (end may be 24:00).' })
export class HoursIntervalNode {
  @Field()
  start!: string;

  @Field()
  end!: string;
}

@ObjectType('WeeklyInterval', { simpleResolvers: true })
export class WeeklyIntervalNode extends HoursIntervalNode {
  @Field(() => WeekdayValue)
  day!: Weekday;
}

@ObjectType('DateOverride', { simpleResolvers: true, description: 'A local date whose hours replace its weekday’s; no hours: a day off.' })
export class DateOverrideNode {
  @Field({ description: 'YYYY-MM-DD' })
  date!: string;

  @Directive(listSize({ assumedSize: L.intervalsPerDay }))
  @Field(() => [HoursIntervalNode])
  hours!: HoursIntervalNode[];
}

@ObjectType('WorkingRange', { simpleResolvers: true, description: 'A stretch of an agent’s working time: [startsAt, endsAt), in UTC.' })
export class WorkingRangeNode {
  @Field(() => Date)
  startsAt!: string;

  @Field(() => Date)
  endsAt!: string;
}

@ObjectType('AvailabilityRules', {
  simpleResolvers: true,
  description:
    'What an agent lets others take from its calendar: working hours in its time zone, date overrides, buffers, notice, advance and limits. ' +
    'They bind other agents, and the agent itself with enforceOnOwnBookings; buffers bind every booking.',
})
export class AvailabilityRulesNode {
  @Field(() => ID)
  agentId!: string;

  @Field({ description: 'IANA time zone.' })
  timeZone!: string;

  @Directive(listSize({ assumedSize: L.weeklyIntervals }))
  @Field(() => [WeeklyIntervalNode], { nullable: true, description: 'Null: no weekly hours (every day open unless overridden).' })
  weeklyHours!: WeeklyIntervalNode[] | null;

  @Directive(listSize({ assumedSize: L.dateOverrides }))
  @Field(() => [DateOverrideNode])
  dateOverrides!: DateOverrideNode[];

  @Field(() => Int)
  bufferBeforeMinutes!: number;

  @Field(() => Int)
  bufferAfterMinutes!: number;

  @Field(() => Int)
  minimumNoticeMinutes!: number;

  @Field(() => Int, { nullable: true })
  maximumAdvanceDays!: number | null;

  @Field(() => Int, { nullable: true })
  dailyLimit!: number | null;

  @Field(() => Int, { nullable: true })
  weeklyLimit!: number | null;

  @Field()
  enforceOnOwnBookings!: boolean;

  @Field(() => Date)
  updatedAt!: string;

  static from(view: AvailabilityRulesView): AvailabilityRulesNode {
    return Object.assign(new AvailabilityRulesNode(), view);
  }
}

@InputType()
export class HoursIntervalInput {
  @Field({ description: 'HH:MM, 00:00 to 23:59' })
  start!: string;

  @Field({ description: 'HH:MM, after start; 24:00 is the end of the day' })
  end!: string;
}

@InputType()
export class WeeklyIntervalInput extends HoursIntervalInput {
  @Field(() => WeekdayValue)
  day!: Weekday;
}

@InputType()
export class DateOverrideInput {
  @Field({ description: 'YYYY-MM-DD, local' })
  date!: string;

  @Field(() => [HoursIntervalInput], { description: `At most ${L.intervalsPerDay}; none: the day is off.` })
  hours!: HoursIntervalInput[];
}

@InputType('AvailabilityRulesInput')
export class AvailabilityRulesInputType {
  @Field({ description: 'IANA time zone, e.g. Europe/Berlin.' })
  timeZone!: string;

  @Field(() => [WeeklyIntervalInput], {
    nullable: true,
    description: `At most ${L.intervalsPerDay} intervals a day, in order and apart. Null: no weekly hours.`,
  })
  weeklyHours?: WeeklyIntervalInput[] | null;

  @Field(() => [DateOverrideInput], { nullable: true, description: `At most ${L.dateOverrides} dates.` })
  dateOverrides?: DateOverrideInput[] | null;

  @Field(() => Int, { nullable: true, description: `0 to ${L.bufferMaxMinutes}; 0 by default.` })
  bufferBeforeMinutes?: number | null;

  @Field(() => Int, { nullable: true, description: `0 to ${L.bufferMaxMinutes}; 0 by default.` })
  bufferAfterMinutes?: number | null;

  @Field(() => Int, { nullable: true, description: `0 to ${L.noticeMaxMinutes}; 0 by default.` })
  minimumNoticeMinutes?: number | null;

  @Field(() => Int, { nullable: true, description: `1 to ${L.advanceMaxDays}; null: no bound.` })
  maximumAdvanceDays?: number | null;

  @Field(() => Int, { nullable: true, description: `1 to ${L.dailyLimitMax}; null: no limit.` })
  dailyLimit?: number | null;

  @Field(() => Int, { nullable: true, description: `1 to ${L.weeklyLimitMax}; null: no limit.` })
  weeklyLimit?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'false by default.' })
  enforceOnOwnBookings?: boolean | null;
}
