import { DateTime } from 'luxon';
import rrulePackage from 'rrule';

// rrule ships CommonJS whose named exports Node cannot see from ESM; the classes hang off the default.
const { RRule } = rrulePackage;

/**
 * Recurrence rules (RFC 5545) as bookings use them. Pure functions, no I/O.
 *
 * A rule is stored as the client sent it: an RRULE (`FREQ=WEEKLY;BYDAY=MO;COUNT=10`, with or without
 * the `RRULE:` prefix), optionally preceded by a `DTSTART;TZID=<zone>:<local time>` line that names
 * the time zone whose wall clock the occurrences keep across daylight-saving changes. DTSTART is
 * always the booking's `startsAt` (the first occurrence); each occurrence lasts `endsAt - startsAt`.
 */

export interface Slot {
  startsAt: Date;
  endsAt: Date;
}

export interface ParsedRule {
  /** IANA zone whose wall clock the rule follows; UTC when the rule names none. */
  zone: string;
  rule: InstanceType<typeof RRule>;
}

export class RecurrenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecurrenceError';
  }
}

// SECONDLY and MINUTELY are not calendar bookings, and a rule of theirs that rarely matches makes
// rrule.js step through millions of instants: refused.
const FREQUENCIES = new Set(['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY', 'HOURLY']);
/** Expansion never looks further than this past its start, so a rule that never matches still ends. */
const MAX_SEARCH_MS = 10 * 366 * 24 * 3_600_000;
const POSITIVE_INTEGER = /^[1-9]\d*$/;
/** An hourly series ends within this many days of its start (COUNT or UNTIL). */
export const MAX_HOURLY_SPAN_DAYS = 366;
const MAX_HOURLY_SPAN_MS = MAX_HOURLY_SPAN_DAYS * 24 * 3_600_000;
const MAX_HOURLY_OCCURRENCES = MAX_HOURLY_SPAN_DAYS * 24;

/** Stricter than rrule.js, which accepts a missing FREQ, `COUNT=abc` or `INTERVAL=0` (endless loop). */
function checkRuleParts(rruleLine: string): void {
  const parts = new Map<string, string>();
  for (const part of rruleLine.split(';')) {
    const [key, value, ...rest] = part.split('=');
    if (!key || value === undefined || value === '' || rest.length) throw new RecurrenceError(`"${part}" is not NAME=VALUE`);
    if (parts.has(key.toUpperCase())) throw new RecurrenceError(`${key} appears twice`);
    parts.set(key.toUpperCase(), value);
  }
  const freq = parts.get('FREQ');
  if (!freq) throw new RecurrenceError('FREQ is required');
  if (['SECONDLY', 'MINUTELY'].includes(freq.toUpperCase())) throw new RecurrenceError(`FREQ=${freq} is not supported for bookings`);
  if (!FREQUENCIES.has(freq.toUpperCase())) throw new RecurrenceError(`FREQ=${freq} is not a frequency`);
  for (const key of ['COUNT', 'INTERVAL']) {
    const value = parts.get(key);
    if (value !== undefined && !POSITIVE_INTEGER.test(value)) throw new RecurrenceError(`${key} must be a positive integer`);
  }
  if (parts.has('COUNT') && parts.has('UNTIL')) throw new RecurrenceError('COUNT and UNTIL cannot both be set');
  // rrule.js steps hour by hour from the first occurrence: an open-ended hourly series would cost a
  // step per hour of its age on every read. Hourly series end (COUNT, or UNTIL checked in parseRule).
  if (freq.toUpperCase() === 'HOURLY') {
    const count = Number(parts.get('COUNT') ?? Number.NaN);
    if (!parts.has('UNTIL') && !(count <= MAX_HOURLY_OCCURRENCES)) {
      throw new RecurrenceError(`FREQ=HOURLY needs COUNT (at most ${MAX_HOURLY_OCCURRENCES}) or an UNTIL within ${MAX_HOURLY_SPAN_DAYS} days`);
    }
  }
  checkReachable(parts);
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A rule that can never match (the 31st of February) sends rrule.js searching to the year 9999,
 * which takes seconds: refuse the month/day combinations that exist in no year.
 */
function checkReachable(parts: Map<string, string>): void {
  const monthDays = parts.get('BYMONTHDAY')?.split(',').map(Number);
  if (!monthDays?.length || monthDays.some((day) => !Number.isInteger(day) || day < 0)) return;
  const months = parts.get('BYMONTH')?.split(',').map(Number) ?? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const reachable = months.some((month) => monthDays.some((day) => day <= (DAYS_IN_MONTH[month - 1] ?? 0)));
  if (!reachable) throw new RecurrenceError('BYMONTHDAY and BYMONTH name a date that exists in no year');
}

function parseDtstartLine(line: string, startsAt: Date): string {
  const match = /^DTSTART(?:;TZID=([^:;]+))?:(\d{8}T\d{6}Z?)$/i.exec(line);
  if (!match) throw new RecurrenceError('DTSTART must look like DTSTART;TZID=Europe/Berlin:20260105T090000');
  const [, zone = 'UTC', value = ''] = match;
  const local = DateTime.fromFormat(value.replace(/Z$/i, ''), "yyyyMMdd'T'HHmmss", { zone: value.endsWith('Z') ? 'UTC' : zone });
  if (!DateTime.local().setZone(zone).isValid) throw new RecurrenceError(`TZID ${zone} is not a known time zone`);
  if (!local.isValid) throw new RecurrenceError(`DTSTART ${value} is not a valid local time in ${zone}`);
  if (local.toMillis() !== startsAt.getTime()) {
    throw new RecurrenceError(`DTSTART must be the booking's startsAt (${startsAt.toISOString()})`);
  }
  return zone;
}

/** Parses and validates a rule for a booking starting at `startsAt`; throws `RecurrenceError`. */
export function parseRule(text: string, startsAt: Date): ParsedRule {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  let zone = 'UTC';
  const ruleLines: string[] = [];
  for (const line of lines) {
    if (/^DTSTART[;:]/i.test(line)) zone = parseDtstartLine(line, startsAt);
    else if (/^RRULE:/i.test(line)) ruleLines.push(line.slice('RRULE:'.length));
    else if (/^[A-Z-]+[:;]/i.test(line)) throw new RecurrenceError(`${line.split(/[:;]/)[0]} lines are not supported`);
    else ruleLines.push(line);
  }
  if (ruleLines.length !== 1) throw new RecurrenceError('exactly one RRULE is required');
  const ruleLine = ruleLines[0]!;
  checkRuleParts(ruleLine);

  let options;
  try {
    options = RRule.parseString(ruleLine);
  } catch (error) {
    throw new RecurrenceError(error instanceof Error ? error.message : 'the rule does not parse');
  }
  if (options.byweekday && (Array.isArray(options.byweekday) ? options.byweekday : [options.byweekday]).some((day) => day == null)) {
    throw new RecurrenceError('BYDAY has an unknown weekday');
  }
  // Expand on the zone's wall clock: rrule works on "floating" times whose UTC fields are the local
  // fields; `toInstant` turns each back into a real instant in the zone (so 09:00 stays 09:00 local).
  const wall = DateTime.fromJSDate(startsAt, { zone });
  const floatingStart = new Date(Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, wall.millisecond));
  try {
    if (options.freq === RRule.HOURLY && options.until && options.until.getTime() - floatingStart.getTime() > MAX_HOURLY_SPAN_MS) {
      throw new RecurrenceError(`FREQ=HOURLY needs an UNTIL within ${MAX_HOURLY_SPAN_DAYS} days of the start`);
    }
    const rule = new RRule({ ...options, dtstart: floatingStart, tzid: null });
    // A bounded probe: rrule.js throws here for options it cannot expand.
    rule.between(floatingStart, new Date(floatingStart.getTime() + 7 * 24 * 3_600_000), true);
    return { zone, rule };
  } catch (error) {
    throw new RecurrenceError(error instanceof Error ? error.message : 'the rule does not expand');
  }
}

function toInstant(floating: Date, zone: string): Date {
  return DateTime.fromObject(
    {
      year: floating.getUTCFullYear(),
      month: floating.getUTCMonth() + 1,
      day: floating.getUTCDate(),
      hour: floating.getUTCHours(),
      minute: floating.getUTCMinutes(),
      second: floating.getUTCSeconds(),
      millisecond: floating.getUTCMilliseconds(),
    },
    { zone },
  ).toJSDate();
}

function toFloating(instant: Date, zone: string): Date {
  const wall = DateTime.fromJSDate(instant, { zone });
  return new Date(Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, wall.millisecond));
}

export interface ExpandOptions {
  /** Only occurrences starting at or after this instant. */
  from?: Date;
  /** Only occurrences starting before this instant. */
  before?: Date;
  /** At most this many occurrences. */
  limit?: number;
  /** Occurrence start instants removed from the series (EXDATE). */
  excluded?: readonly Date[];
}

/**
 * The concrete slots of a booking's rule, chronological. The first occurrence is always the
 * booking's own slot (RFC 5545: DTSTART is the first instance even where the rule would skip it).
 */
export function expandRule(parsed: ParsedRule, booking: Slot, options: ExpandOptions = {}): Slot[] {
  if (options.limit === undefined && options.before === undefined) {
    throw new Error('expandRule needs a limit or an end: a rule may never end');
  }
  const duration = booking.endsAt.getTime() - booking.startsAt.getTime();
  const excluded = new Set((options.excluded ?? []).map((date) => date.getTime()));
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const from = options.from ?? booking.startsAt;
  const floatingFrom = toFloating(from, parsed.zone);
  // An hourly series has no occurrence past MAX_HOURLY_SPAN_DAYS after its start (so no read steps further).
  const seriesEnd = parsed.rule.options.freq === RRule.HOURLY ? booking.startsAt.getTime() + MAX_HOURLY_SPAN_MS : Number.POSITIVE_INFINITY;
  const before = Math.min(options.before?.getTime() ?? from.getTime() + MAX_SEARCH_MS, seriesEnd);
  if (before <= from.getTime()) return [];
  const floatingBefore = toFloating(new Date(before), parsed.zone);

  const slots: Slot[] = [];
  const accept = (startsAt: Date) => {
    if (startsAt < from || startsAt.getTime() >= before || excluded.has(startsAt.getTime())) return;
    if (slots.length && slots[slots.length - 1]!.startsAt.getTime() === startsAt.getTime()) return;
    slots.push({ startsAt, endsAt: new Date(startsAt.getTime() + duration) });
  };

  accept(booking.startsAt);
  // `between` stops at the window's end even when nothing matches; the callback stops at the limit.
  parsed.rule.between(floatingFrom, floatingBefore, true, (floating) => {
    accept(toInstant(floating, parsed.zone));
    return slots.length < limit;
  });
  return slots.slice(0, Number.isFinite(limit) ? limit : undefined);
}
