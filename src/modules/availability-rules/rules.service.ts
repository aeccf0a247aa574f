import type { EntityManager } from '@mikro-orm/postgresql';
import { IANAZone } from 'luxon';
import type { Actor } from '../../platform/auth/actor.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import { isUuid } from '../../platform/uuid.js';
import { agentOf, maySeeSettings } from '../agents/index.js';
import { AGENT_PARENT, RULES_OF, WORKING_TIME_OF, type RulesRow } from './sql/rules.sql.js';
import { RULE_LIMITS, WEEKDAYS, type AvailabilityRulesInput, type AvailabilityRulesView, type DateOverride, type HoursInterval, type WeeklyInterval } from './rules.view.js';

const L = RULE_LIMITS;
/** An IANA zone name (`UTC`, `Europe/Berlin`, `Etc/GMT+5`): not an offset, which Intl and PostgreSQL also read. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$|^24:00$/;
const DATE = /^(\d{4})-(\d\d)-(\d\d)$/;

/** SQLSTATE 22023 (invalid_parameter_value): what timezone() raises for a zone it does not know. */
const UNKNOWN_TIME_ZONE = '22023';

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const timeOf = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/** A real calendar date in bookable years. */
function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 2000 && year < 2200 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * One day's intervals: each `HH:MM`, start before end, in order and apart from the previous one (touching intervals
 * are one interval: join them). Errors are named by the field path (`weeklyHours[3].end`).
 */
function checkIntervals(intervals: readonly { interval: HoursInterval; path: string }[], fields: FieldErrors): void {
  let previousEnd = -1;
  for (const { interval, path } of intervals) {
    const startOk = HH_MM.test(interval.start) && interval.start !== '24:00';
    if (!startOk) fields[`${path}.start`] = 'must be a time HH:MM from 00:00 to 23:59';
    if (!HH_MM.test(interval.end)) fields[`${path}.end`] = 'must be a time HH:MM from 00:01 to 24:00';
    if (!startOk || !HH_MM.test(interval.end)) return;
    const [start, end] = [minutesOf(interval.start), minutesOf(interval.end)];
    if (end <= start) {
      fields[`${path}.end`] = 'must be after start';
      return;
    }
    if (start < previousEnd) {
      fields[`${path}.start`] = 'must not overlap the previous interval of the day: list intervals in order, apart';
      return;
    }
    if (start === previousEnd) {
      fields[`${path}.start`] = 'touches the previous interval of the day: join them into one';
      return;
    }
    previousEnd = end;
  }
}

function checkBounded(value: number | null | undefined, name: string, min: number, max: number, fields: FieldErrors): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < min || value > max) fields[name] = `must be a whole number from ${min} to ${max}`;
}

/** Every field checked, every problem named by its path (400 `validation`); nothing is written on any. */
export function checkRules(input: AvailabilityRulesInput): void {
  const fields: FieldErrors = {};
  if (typeof input.timeZone !== 'string' || input.timeZone.length < 1 || input.timeZone.length > L.timeZoneMaxLength || !ZONE_NAME.test(input.timeZone) || !IANAZone.isValidZone(input.timeZone)) {
    fields.timeZone = 'must be an IANA time zone, such as Europe/Berlin or America/New_York';
  }
  if (input.weeklyHours) {
    if (input.weeklyHours.length > L.weeklyIntervals) fields.weeklyHours = `must hold at most ${L.weeklyIntervals} intervals`;
    else {
      for (const day of WEEKDAYS) {
        const ofDay = input.weeklyHours.flatMap((interval, index) => (interval.day === day ? [{ interval, path: `weeklyHours[${index}]` }] : []));
        if (ofDay.length > L.intervalsPerDay) fields.weeklyHours = `must hold at most ${L.intervalsPerDay} intervals on ${day}`;
        checkIntervals(ofDay, fields);
      }
      input.weeklyHours.forEach((interval, index) => {
        if (!(WEEKDAYS as readonly string[]).includes(interval.day)) fields[`weeklyHours[${index}].day`] = `must be one of ${WEEKDAYS.join(', ')}`;
      });
    }
  }
  const overrides = input.dateOverrides ?? [];
  if (overrides.length > L.dateOverrides) fields.dateOverrides = `must hold at most ${L.dateOverrides} dates`;
  else {
    const seen = new Set<string>();
    overrides.forEach((override, index) => {
      const path = `dateOverrides[${index}]`;
      if (!isDate(override.date)) fields[`${path}.date`] = 'must be a date YYYY-MM-DD from 2000-01-01 to 2199-12-31';
      else if (seen.has(override.date)) fields[`${path}.date`] = 'is listed twice';
      seen.add(override.date);
      if (override.hours.length > L.intervalsPerDay) fields[`${path}.hours`] = `must hold at most ${L.intervalsPerDay} intervals`;
      else checkIntervals(override.hours.map((interval, n) => ({ interval, path: `${path}.hours[${n}]` })), fields);
    });
  }
  checkBounded(input.bufferBeforeMinutes, 'bufferBeforeMinutes', 0, L.bufferMaxMinutes, fields);
  checkBounded(input.bufferAfterMinutes, 'bufferAfterMinutes', 0, L.bufferMaxMinutes, fields);
  checkBounded(input.minimumNoticeMinutes, 'minimumNoticeMinutes', 0, L.noticeMaxMinutes, fields);
  checkBounded(input.maximumAdvanceDays, 'maximumAdvanceDays', 1, L.advanceMaxDays, fields);
  checkBounded(input.dailyLimit, 'dailyLimit', 1, L.dailyLimitMax, fields);
  checkBounded(input.weeklyLimit, 'weeklyLimit', 1, L.weeklyLimitMax, fields);
  if (Object.keys(fields).length) throw AppError.validation(fields);
}

/** `{[540,720),[780,1020)}` ↔ intervals. */
function multirangeOf(intervals: readonly HoursInterval[]): string {
  return `{${intervals.map((interval) => `[${minutesOf(interval.start)},${minutesOf(interval.end)})`).join(',')}}`;
}

function intervalsOf(multirange: string): HoursInterval[] {
  return [...multirange.matchAll(/\[(\d+),(\d+)\)/g)].map((match) => ({ start: timeOf(Number(match[1])), end: timeOf(Number(match[2])) }));
}

function viewOf(row: RulesRow): AvailabilityRulesView {
  return {
    agentId: row.agent_id,
    timeZone: row.time_zone,
    weeklyHours: row.weekly_hours && row.weekly_hours.flatMap((hours, index) => intervalsOf(hours).map((interval) => ({ day: WEEKDAYS[index]!, ...interval }))),
    dateOverrides: (row.overrides ?? []).map((override) => ({ date: override.on_date, hours: intervalsOf(override.hours) })),
    bufferBeforeMinutes: row.buffer_before_minutes,
    bufferAfterMinutes: row.buffer_after_minutes,
    minimumNoticeMinutes: row.minimum_notice_minutes,
    maximumAdvanceDays: row.maximum_advance_days,
    dailyLimit: row.daily_limit,
    weeklyLimit: row.weekly_limit,
    enforceOnOwnBookings: row.enforce_on_own_bookings,
    updatedAt: row.updated_at,
  };
}

/**
 * An agent's availability rules: read and replaced whole by the agent or its parent (agents/access.ts `settings`).
 * What they mean is decided in SQL (sql/): every writer, availability and the "why not" answer evaluate them there.
 */
export class AvailabilityRulesService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly statements: Statements,
  ) {}

  /** The rules of `agentId` (the caller when absent); null when the agent has none. */
  async get(caller: Actor, agentId?: string): Promise<AvailabilityRulesView | null> {
    const subject = await this.subject(caller, agentId);
    const row = await this.statements.one(RULES_OF, [subject]);
    return row ? viewOf(row) : null;
  }

  /** Replaces the rules whole (what is absent takes its default), in one transaction. */
  async set(caller: Actor, input: AvailabilityRulesInput, agentId?: string): Promise<AvailabilityRulesView> {
    const subject = await this.subject(caller, agentId);
    checkRules(input);
    const weekly = input.weeklyHours
      ? WEEKDAYS.map((day) => multirangeOf((input.weeklyHours ?? []).filter((interval: WeeklyInterval) => interval.day === day)))
      : null;
    const overrides = (input.dateOverrides ?? []).map((override: DateOverride) => ({ on_date: override.date, hours: multirangeOf(override.hours) }));
    await this.em.transactional(async (tx) => {
      // A zone luxon knows and PostgreSQL does not (their tz databases differ in age) is refused by the table's check.
      await tx.execute(
        `insert into availability_rules (agent_id, time_zone, weekly_hours, buffer_before_minutes, buffer_after_minutes, minimum_notice_minutes,
                                         maximum_advance_days, daily_limit, weekly_limit, enforce_on_own_bookings, updated_at)
         values (?, ?, (select array_agg(h::int4multirange order by n) from jsonb_array_elements_text(?::jsonb) with ordinality as t(h, n)),
                 ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (agent_id) do update set
           time_zone = excluded.time_zone, weekly_hours = excluded.weekly_hours, buffer_before_minutes = excluded.buffer_before_minutes,
           buffer_after_minutes = excluded.buffer_after_minutes, minimum_notice_minutes = excluded.minimum_notice_minutes,
           maximum_advance_days = excluded.maximum_advance_days, daily_limit = excluded.daily_limit, weekly_limit = excluded.weekly_limit,
           enforce_on_own_bookings = excluded.enforce_on_own_bookings, updated_at = excluded.updated_at`,
        [
          subject,
          input.timeZone,
          weekly && JSON.stringify(weekly),
          input.bufferBeforeMinutes ?? 0,
          input.bufferAfterMinutes ?? 0,
          input.minimumNoticeMinutes ?? 0,
          input.maximumAdvanceDays ?? null,
          input.dailyLimit ?? null,
          input.weeklyLimit ?? null,
          input.enforceOnOwnBookings ?? false,
          this.clock.now(),
        ],
      );
      await tx.execute('delete from availability_overrides where agent_id = ?', [subject]);
      if (overrides.length) {
        await tx.execute(
          `insert into availability_overrides (agent_id, on_date, hours)
           select ?, o.on_date, o.hours::int4multirange from jsonb_to_recordset(?::jsonb) as o(on_date date, hours text)`,
          [subject, JSON.stringify(overrides)],
        );
      }
    }).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === UNKNOWN_TIME_ZONE) throw AppError.validation({ timeZone: 'is not a time zone the database knows' });
      throw error;
    });
    return (await this.get(caller, subject))!;
  }

  /**
   * Removes the rules: the agent behaves as one that never had any. Bookings written with buffers keep the range
   * they block (a buffer change applies to bookings written afterwards).
   */
  async clear(caller: Actor, agentId?: string): Promise<void> {
    const subject = await this.subject(caller, agentId);
    await this.em.execute('delete from availability_rules where agent_id = ?', [subject]);
  }

  /**
   * The working time of `agentId` (the caller when absent) inside `[from, to)`, as instants, by the database's one
   * definition (hours, overrides, the zone's daylight-saving changes); null when the agent has no rules (all of its
   * time is working time). What a calendar shades; the window is at most `workingTimeMaxDays` long.
   */
  async workingTime(caller: Actor, from: Date, to: Date, agentId?: string): Promise<{ startsAt: string; endsAt: string }[] | null> {
    const fields: FieldErrors = {};
    if (Number.isNaN(from.getTime())) fields.from = 'must be a valid date-time';
    if (Number.isNaN(to.getTime())) fields.to = 'must be a valid date-time';
    else if (!fields.from && to <= from) fields.to = 'must be after from';
    else if (!fields.from && to.getTime() - from.getTime() > L.workingTimeMaxDays * 86_400_000) fields.to = `must be at most ${L.workingTimeMaxDays} days after from`;
    if (Object.keys(fields).length) throw AppError.validation(fields);
    const subject = await this.subject(caller, agentId);
    const row = await this.statements.one(WORKING_TIME_OF, [subject, from, to]);
    return row ? row.ranges : null;
  }

  /** The agent whose rules are asked for, if the caller may see its settings (itself or its parent). */
  private async subject(caller: Actor, agentId: string | undefined): Promise<string> {
    const actor = agentOf(caller);
    if (agentId === undefined || agentId.toLowerCase() === actor.id) return actor.id;
    const row = isUuid(agentId) ? await this.statements.one(AGENT_PARENT, [agentId]) : undefined;
    if (!row) throw new AppError('not_found', `no agent ${agentId}`);
    if (!maySeeSettings(actor, { id: row.id, parentId: row.parent_id })) throw new AppError('forbidden', 'only the agent and its parent may read or change its availability rules');
    return row.id;
  }
}
