import rrulePackage from 'rrule';
import { instantOfWallClock, isIrregularWallClock, isKnownZone, instantsOfWallClock, offsetAt, utcDateTime, wallClockOf, zoneTransitions } from './wall-clock.js';

// rrule ships CommonJS whose named exports Node cannot see from ESM; the classes hang off the default.
const { RRule } = rrulePackage;

/**
 * Recurrence rules (RFC 5545) as bookings use them. Pure functions, no I/O.
 *
 * A rule is an RRULE (`FREQ=WEEKLY;BYDAY=MO;COUNT=10`, with or without the `RRULE:` prefix),
 * optionally preceded by a `DTSTART;TZID=<zone>:<local time>` line that names the time zone whose
 * wall clock the occurrences keep across daylight-saving changes. DTSTART is always the booking's
 * `startsAt` (the first occurrence); each occurrence lasts `endsAt - startsAt`.
 *
 * rrule.js expands the rule on "floating" times (UTC fields are the zone's wall clock); each
 * wall-clock time is then read as RFC 5545 §3.3.5 says (`wall-clock.ts`). UNTIL is an instant,
 * compared with instants; a new rule's UNTIL is stored in UTC, as RFC 5545 §3.3.10 requires with a
 * zoned DTSTART. A new rule keeps to the parts calendar apps expand alike (`checkPortable`), and the
 * feed's helpers at the end (`feedSeries`, `recurrenceIdOf`, `irregularOccurrences`) say how to
 * write a series so that they expand it as the gateway does.
 */

export interface Slot {
  startsAt: Date;
  endsAt: Date;
}

/** One occurrence of a series, with the wall-clock time the rule gave it (its RECURRENCE-ID). */
export interface Occurrence extends Slot {
  /** The rule's wall-clock time of this occurrence, as a floating Date (UTC fields are local fields). */
  recurrenceId: Date;
}

type Rule = InstanceType<typeof RRule>;

export interface ParsedRule {
  /** IANA zone whose wall clock the rule follows; UTC when the rule names none. */
  zone: string;
  /** DTSTART's wall-clock time (floating): the first occurrence, where the rule's steps start. */
  start: Date;
  /** The rule on floating times, without UNTIL (`until` is compared as an instant). */
  rule: Rule;
  /** UNTIL as an instant, when the rule has one. */
  until: Date | undefined;
  /** The RRULE value (no `RRULE:` prefix) with UNTIL as a UTC DATE-TIME, as the feed writes it. */
  ruleLine: string;
  /** The rule's text with UNTIL as a UTC DATE-TIME: what a new booking stores (the text as sent when UNTIL was already UTC). */
  text: string;
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
const DAY_MS = 24 * 3_600_000;
/**
 * Floating windows are widened by this much and the instants filtered: a wall-clock time moved by a
 * daylight-saving change (a skipped 02:30 is 03:30) lies outside the window its instant is in.
 */
const FLOATING_MARGIN_MS = 2 * DAY_MS;

const UNTIL_VALUE = /^(\d{8})(?:T(\d{6})(Z)?)?$/i;

/** Stricter than rrule.js, which accepts a missing FREQ, `COUNT=abc` or `INTERVAL=0` (endless loop). */
function ruleParts(rruleLine: string): Map<string, string> {
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
  const until = parts.get('UNTIL');
  if (until !== undefined && !UNTIL_VALUE.test(until)) throw new RecurrenceError(`UNTIL=${until} is not a date-time like 20310527T180000Z`);
  // rrule.js steps hour by hour from the first occurrence: an open-ended hourly series would cost a
  // step per hour of its age on every read. Hourly series end (COUNT, or UNTIL checked in parseRule).
  if (freq.toUpperCase() === 'HOURLY') {
    const count = Number(parts.get('COUNT') ?? Number.NaN);
    if (!parts.has('UNTIL') && !(count <= MAX_HOURLY_OCCURRENCES)) {
      throw new RecurrenceError(`FREQ=HOURLY needs COUNT (at most ${MAX_HOURLY_OCCURRENCES}) or an UNTIL within ${MAX_HOURLY_SPAN_DAYS} days`);
    }
  }
  checkReachable(parts);
  return parts;
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

/** The rule parts a new rule may use: those calendar apps expand alike (`checkPortable`). */
const PORTABLE_PARTS = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'WKST']);
/** The fewest days each month has (February in a common year). */
const SHORTEST_MONTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const NUMBERED_DAY = /^[+-]?\d/;

/**
 * Rules calendar apps do not read alike, refused in a new rule (a stored rule keeps expanding as it
 * did). Each refusal was found by expanding generated rules with the gateway and with ical.js, whose
 * algorithm is libical's (Thunderbird, Evolution): see test/integration/scheduling/feed-agreement.test.ts.
 * RFC 5545 forbids some outright; rrule.js and python-dateutil read the others one way, libical another.
 */
function checkPortable(parts: Map<string, string>, parsed: ParsedRule, startsAt: Date): void {
  const freq = parts.get('FREQ')!.toUpperCase();
  const unsupported = [...parts.keys()].filter((key) => !PORTABLE_PARTS.has(key));
  if (unsupported.length) {
    // BYSETPOS, BYHOUR, BYMINUTE, BYSECOND, BYWEEKNO and BYYEARDAY: libical skips, repeats or loops on them.
    throw new RecurrenceError(`${unsupported.join(', ')} ${unsupported.length > 1 ? 'are' : 'is'} read differently by calendar apps: use FREQ, INTERVAL, COUNT or UNTIL, BYDAY, BYMONTHDAY, BYMONTH, WKST`);
  }
  const until = parts.get('UNTIL');
  if (until !== undefined && !/T/i.test(until)) {
    // RFC 5545 3.3.10: UNTIL has DTSTART's value type (a date-time here). Apps read a date as either
    // its midnight (in UTC or in the zone) or its end: say which instant is meant.
    throw new RecurrenceError(`UNTIL=${until} is a date: give the last start as a date-time (UTC like ${until}T235959Z, or a local time on DTSTART's zone)`);
  }
  const days = parts.get('BYDAY')?.split(',') ?? [];
  const monthDays = parts.get('BYMONTHDAY')?.split(',').map(Number);
  if (days.some((day) => NUMBERED_DAY.test(day)) && freq !== 'MONTHLY' && freq !== 'YEARLY') {
    throw new RecurrenceError(`a numbered BYDAY (${days.find((day) => NUMBERED_DAY.test(day))}) needs FREQ=MONTHLY or YEARLY (RFC 5545)`);
  }
  if (monthDays && freq === 'WEEKLY') throw new RecurrenceError('BYMONTHDAY cannot be used with FREQ=WEEKLY (RFC 5545)');
  if (monthDays?.some((day) => day < 0) && (freq === 'DAILY' || freq === 'HOURLY')) {
    // libical ignores a negative BYMONTHDAY in these rules, and can loop forever on it.
    throw new RecurrenceError(`a negative BYMONTHDAY with FREQ=${freq} is read differently by calendar apps: use FREQ=MONTHLY`);
  }
  if (parts.has('BYMONTH') && freq === 'MONTHLY') {
    // libical skips or adds months with BYMONTH in a monthly rule.
    throw new RecurrenceError('BYMONTH with FREQ=MONTHLY is read differently by calendar apps: use FREQ=YEARLY with BYMONTH, or INTERVAL');
  }
  if (freq === 'YEARLY') checkPortableYearly(parts, parsed);
  if (freq === 'HOURLY' && parts.has('COUNT')) {
    // The gateway books no hourly occurrence past MAX_HOURLY_SPAN_DAYS; apps would show the rest of COUNT.
    const count = Number(parts.get('COUNT'));
    const last = parsed.rule.between(parsed.start, new Date(parsed.start.getTime() + MAX_HOURLY_SPAN_MS + DAY_MS), true)[count - 1];
    if (!last || instantOfWallClock(last, parsed.zone).getTime() - startsAt.getTime() > MAX_HOURLY_SPAN_MS) throw new RecurrenceError(`FREQ=HOURLY needs its ${count} occurrences within ${MAX_HOURLY_SPAN_DAYS} days of the start`);
  }
}

function checkPortableYearly(parts: Map<string, string>, parsed: ParsedRule): void {
  const monthDays = parts.get('BYMONTHDAY')?.split(',').map(Number);
  const months = parts.get('BYMONTH')?.split(',').map(Number) ?? [parsed.start.getUTCMonth() + 1];
  if (monthDays && !parts.has('BYMONTH')) {
    // "every month" to rrule.js and python-dateutil, "DTSTART's month" to libical: name the months.
    throw new RecurrenceError('FREQ=YEARLY with BYMONTHDAY needs BYMONTH (calendar apps disagree on which months it means)');
  }
  if (monthDays?.some((day) => day < 0)) {
    throw new RecurrenceError('a negative BYMONTHDAY with FREQ=YEARLY is read differently by calendar apps: use FREQ=MONTHLY;INTERVAL=12');
  }
  const datesOnly = !parts.has('BYDAY');
  const dayNumbers = monthDays ?? (datesOnly ? [parsed.start.getUTCDate()] : []);
  for (const month of months) {
    const missing = dayNumbers.find((day) => day > SHORTEST_MONTHS[month - 1]!);
    // libical moves a date some years lack (February 29) into the next month; RFC 5545 skips it.
    if (missing !== undefined) {
      throw new RecurrenceError(`FREQ=YEARLY on day ${missing} of month ${month}, which some years lack, is read differently by calendar apps: use FREQ=MONTHLY;INTERVAL=12;BYMONTHDAY=${missing}`);
    }
  }
  const numbered = parts.get('BYDAY')?.split(',').find((day) => NUMBERED_DAY.test(day));
  if (numbered && !parts.has('BYMONTH')) throw new RecurrenceError(`a numbered BYDAY (${numbered}) with FREQ=YEARLY needs BYMONTH (calendar apps disagree on it within a year)`);
}

interface DtstartLine {
  zone: string;
  start: Date;
}

/** `yyyyMMddTHHmmss` as a floating Date, or undefined when the fields name no date and time. */
function floatingOf(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2}))?$/.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1).map((field) => Number(field ?? 0));
  const floating = new Date(Date.UTC(year!, month! - 1, day!, hour, minute, second));
  const fieldsKept =
    floating.getUTCFullYear() === year &&
    floating.getUTCMonth() === month! - 1 &&
    floating.getUTCDate() === day &&
    floating.getUTCHours() === hour &&
    floating.getUTCMinutes() === minute &&
    floating.getUTCSeconds() === second;
  return fieldsKept ? floating : undefined;
}

function parseDtstartLine(line: string, startsAt: Date): DtstartLine {
  const match = /^DTSTART(?:;TZID=([^:;]+))?:(\d{8}T\d{6})(Z?)$/i.exec(line);
  if (!match) throw new RecurrenceError('DTSTART must look like DTSTART;TZID=Europe/Berlin:20260105T090000');
  const [, zone = 'UTC', value = '', utc] = match;
  if (!isKnownZone(zone)) throw new RecurrenceError(`TZID ${zone} is not a known time zone`);
  const floating = floatingOf(value);
  if (!floating) throw new RecurrenceError(`DTSTART ${value} is not a valid local time in ${zone}`);
  const mismatch = new RecurrenceError(`DTSTART must be the booking's startsAt (${startsAt.toISOString()})`);
  if (utc) {
    // A UTC DTSTART (or, oddly, a TZID with a UTC time): the rule keeps the zone's wall clock of that instant.
    if (floating.getTime() !== startsAt.getTime()) throw mismatch;
    return { zone, start: wallClockOf(startsAt, zone) };
  }
  // A wall-clock time that occurs twice names either instant (startsAt says which); a skipped one
  // names the instant RFC 5545 §3.3.5 gives it. A DTSTART without TZID or Z is read as UTC: a booking is an instant.
  const instants = instantsOfWallClock(floating, zone);
  const named = instants.length ? instants : [instantOfWallClock(floating, zone).getTime()];
  if (!named.includes(startsAt.getTime())) throw mismatch;
  return { zone, start: floating };
}

/** UNTIL as an instant: UTC as written; a local date-time (or a date, at its midnight) on DTSTART's wall clock. */
function untilInstant(value: string, zone: string): Date {
  const [, date = '', time = '000000', utc] = UNTIL_VALUE.exec(value) ?? [];
  const floating = floatingOf(`${date}T${time}`);
  if (!floating) throw new RecurrenceError(`UNTIL=${value} is not a valid date-time`);
  return utc ? floating : instantOfWallClock(floating, zone);
}

/** Parses a stored rule of a booking starting at `startsAt`; throws `RecurrenceError`. */
export function parseRule(text: string, startsAt: Date): ParsedRule {
  return parse(text, startsAt).parsed;
}

/** Parses a rule a client sends for a new booking: `parseRule`, and only rule parts calendar apps agree on. */
export function parseNewRule(text: string, startsAt: Date): ParsedRule {
  const { parsed, parts } = parse(text, startsAt);
  checkPortable(parts, parsed, startsAt);
  return parsed;
}

function parse(text: string, startsAt: Date): { parsed: ParsedRule; parts: Map<string, string> } {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  let dtstart: DtstartLine = { zone: 'UTC', start: startsAt };
  const ruleLines: { index: number; prefix: string; value: string }[] = [];
  lines.forEach((line, index) => {
    if (/^DTSTART[;:]/i.test(line)) dtstart = parseDtstartLine(line, startsAt);
    else if (/^RRULE:/i.test(line)) ruleLines.push({ index, prefix: line.slice(0, 'RRULE:'.length), value: line.slice('RRULE:'.length) });
    else if (/^[A-Z-]+[:;]/i.test(line)) throw new RecurrenceError(`${line.split(/[:;]/)[0]} lines are not supported`);
    else ruleLines.push({ index, prefix: '', value: line });
  });
  if (ruleLines.length !== 1) throw new RecurrenceError('exactly one RRULE is required');
  const ruleLine = ruleLines[0]!;
  const parts = ruleParts(ruleLine.value);
  const { zone, start } = dtstart;

  const untilValue = parts.get('UNTIL');
  const until = untilValue === undefined ? undefined : untilInstant(untilValue, zone);
  const canonicalLine =
    until && !/Z$/i.test(untilValue!) ? ruleLine.value.replace(/(^|;)UNTIL=[^;]*/i, `$1UNTIL=${utcDateTime(until)}`) : ruleLine.value;
  const canonicalText =
    canonicalLine === ruleLine.value ? text : lines.map((line, index) => (index === ruleLine.index ? ruleLine.prefix + canonicalLine : line)).join('\n');

  let options;
  try {
    // UNTIL is left out: rrule.js would compare it with floating times.
    options = RRule.parseString(ruleLine.value.replace(/(^|;)UNTIL=[^;]*/i, '').replace(/^;/, ''));
  } catch (error) {
    throw new RecurrenceError(error instanceof Error ? error.message : 'the rule does not parse');
  }
  if (options.byweekday && (Array.isArray(options.byweekday) ? options.byweekday : [options.byweekday]).some((day) => day == null)) {
    throw new RecurrenceError('BYDAY has an unknown weekday');
  }
  if (options.freq === RRule.HOURLY && until && until.getTime() - startsAt.getTime() > MAX_HOURLY_SPAN_MS) {
    throw new RecurrenceError(`FREQ=HOURLY needs an UNTIL within ${MAX_HOURLY_SPAN_DAYS} days of the start`);
  }
  try {
    const rule = new RRule({ ...options, dtstart: start, tzid: null, until: null });
    // A bounded probe: rrule.js throws here for options it cannot expand.
    rule.between(start, new Date(start.getTime() + DAY_MS), true);
    return { parsed: { zone, start, rule, until, ruleLine: canonicalLine, text: canonicalText }, parts };
  } catch (error) {
    throw new RecurrenceError(error instanceof Error ? error.message : 'the rule does not expand');
  }
}

const present = (value: unknown) => value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0);

/**
 * The rule's steps from about `floatingFrom` on, without stepping from DTSTART: rrule.js has no way
 * to start later, so a series that began years ago cost a step per day of its age on every read (a
 * daily series from 2000 took 67 ms for its next 200 occurrences in 2026). The same rule is started
 * a whole number of its periods later (INTERVAL days, weeks, months or years), where it steps in
 * the same phase, with what rrule.js would have taken from DTSTART (its weekday, day and month)
 * written out. A rule with COUNT must count from DTSTART; an hourly one ends within a year.
 */
function stepsFrom(parsed: ParsedRule, floatingFrom: number): Rule {
  const options = parsed.rule.origOptions;
  const start = parsed.start;
  if (present(options.count) || options.freq === RRule.HOURLY) return parsed.rule;
  const interval = options.interval ?? 1;
  let later: Date;
  const defaults: Partial<typeof options> = {};
  if (options.freq === RRule.DAILY || options.freq === RRule.WEEKLY) {
    const period = (options.freq === RRule.DAILY ? 1 : 7) * interval * DAY_MS;
    const periods = Math.floor((floatingFrom - start.getTime()) / period);
    if (periods <= 0) return parsed.rule;
    later = new Date(start.getTime() + periods * period);
  } else {
    const monthsPerPeriod = (options.freq === RRule.MONTHLY ? 1 : 12) * interval;
    const from = new Date(floatingFrom);
    const startMonth = start.getUTCFullYear() * 12 + start.getUTCMonth();
    const periods = Math.floor((from.getUTCFullYear() * 12 + from.getUTCMonth() - startMonth) / monthsPerPeriod);
    if (periods <= 0) return parsed.rule;
    const month = startMonth + periods * monthsPerPeriod;
    // The first day of the period's first month, at DTSTART's time of day.
    later = new Date(Date.UTC(Math.floor(month / 12), month % 12, 1, start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds()));
    const datesFromStart = !(present(options.byweekno) || present(options.byyearday) || present(options.bymonthday) || present(options.byweekday) || present(options.byeaster));
    if (datesFromStart) {
      defaults.bymonthday = start.getUTCDate();
      if (options.freq === RRule.YEARLY && !present(options.bymonth)) defaults.bymonth = start.getUTCMonth() + 1;
    }
  }
  return new RRule({ ...options, ...defaults, dtstart: later, until: null, count: null }, true);
}

/**
 * The rule's occurrences with instants in [from, before), chronological, each visited until `visit`
 * answers false. The booking's own slot comes first (RFC 5545: DTSTART is the first occurrence even
 * where the rule would skip it). Two wall-clock times naming one instant (a skipped 02:30 and 03:30)
 * are one occurrence, under the time that exists.
 */
function walk(parsed: ParsedRule, booking: Slot, from: number, before: number, visit: (occurrence: Occurrence) => boolean): void {
  const duration = booking.endsAt.getTime() - booking.startsAt.getTime();
  const first = booking.startsAt.getTime();
  const until = parsed.until?.getTime() ?? Number.POSITIVE_INFINITY;
  let pending: Occurrence | undefined;
  let stopped = false;
  const emit = () => {
    if (pending && pending.startsAt.getTime() >= from && !stopped) stopped = !visit(pending);
    pending = undefined;
    return !stopped;
  };
  const offer = (occurrence: Occurrence): boolean => {
    if (pending && pending.startsAt.getTime() === occurrence.startsAt.getTime()) {
      if (isIrregularWallClock(pending.recurrenceId, parsed.zone) && !isIrregularWallClock(occurrence.recurrenceId, parsed.zone)) {
        pending.recurrenceId = occurrence.recurrenceId;
      }
      return true;
    }
    if (!emit()) return false;
    pending = occurrence;
    return true;
  };
  const occurrenceAt = (startsAt: number, recurrenceId: Date): Occurrence => ({
    startsAt: new Date(startsAt),
    endsAt: new Date(startsAt + duration),
    recurrenceId,
  });

  if (first < before) offer(occurrenceAt(first, parsed.start));
  if (!stopped && first < before) {
    const floatingFrom = Math.max(parsed.start.getTime(), wallClockOf(new Date(Math.max(from, first)), parsed.zone).getTime() - FLOATING_MARGIN_MS);
    const floatingBefore = wallClockOf(new Date(before), parsed.zone).getTime() + FLOATING_MARGIN_MS;
    stepsFrom(parsed, floatingFrom).between(new Date(floatingFrom), new Date(floatingBefore), true, (floating) => {
      if (floating.getTime() === parsed.start.getTime()) return true; // the booking's own slot, offered first
      const startsAt = instantOfWallClock(floating, parsed.zone).getTime();
      if (startsAt > until || startsAt >= before) return false;
      // A step before the booking's own instant (the later of a repeated 01:30 started the series) is no occurrence.
      if (startsAt < first) return true;
      return offer(occurrenceAt(startsAt, new Date(floating.getTime())));
    });
  }
  emit();
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

/** Where an expansion stops looking: the caller's end, else ten years on; an hourly series' end. */
function searchEnd(parsed: ParsedRule, booking: Slot, from: Date, before: Date | undefined): number {
  // An hourly series has no occurrence past MAX_HOURLY_SPAN_DAYS after its start (so no read steps further).
  const seriesEnd = parsed.rule.options.freq === RRule.HOURLY ? booking.startsAt.getTime() + MAX_HOURLY_SPAN_MS : Number.POSITIVE_INFINITY;
  return Math.min(before?.getTime() ?? from.getTime() + MAX_SEARCH_MS, seriesEnd);
}

/** The concrete occurrences of a booking's rule, chronological, each with its wall-clock RECURRENCE-ID. */
export function expandOccurrences(parsed: ParsedRule, booking: Slot, options: ExpandOptions = {}): Occurrence[] {
  if (options.limit === undefined && options.before === undefined) {
    throw new Error('expandRule needs a limit or an end: a rule may never end');
  }
  const excluded = new Set((options.excluded ?? []).map((date) => date.getTime()));
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const from = options.from ?? booking.startsAt;
  const before = searchEnd(parsed, booking, from, options.before);
  const occurrences: Occurrence[] = [];
  if (before <= from.getTime() || limit <= 0) return occurrences;
  walk(parsed, booking, from.getTime(), before, (occurrence) => {
    if (!excluded.has(occurrence.startsAt.getTime())) occurrences.push(occurrence);
    return occurrences.length < limit;
  });
  return occurrences;
}

/**
 * The concrete slots of a booking's rule, chronological. The first occurrence is always the
 * booking's own slot (RFC 5545: DTSTART is the first instance even where the rule would skip it).
 */
export function expandRule(parsed: ParsedRule, booking: Slot, options: ExpandOptions = {}): Slot[] {
  return expandOccurrences(parsed, booking, options).map(({ startsAt, endsAt }) => ({ startsAt, endsAt }));
}

/**
 * The wall-clock time the rule gave the occurrence starting at `instant` (an EXDATE's value must
 * name it as the rule does). It is the instant's own wall clock, except for an occurrence on a
 * skipped time (02:30 on the spring-forward day is 03:30): only then is the rule expanded.
 */
export function recurrenceIdOf(parsed: ParsedRule, booking: Slot, instant: Date): Date {
  if (instant.getTime() === booking.startsAt.getTime() && !isIrregularWallClock(parsed.start, parsed.zone)) return parsed.start;
  const wall = wallClockOf(instant, parsed.zone);
  const jump = offsetAt(parsed.zone, instant.getTime()) - offsetAt(parsed.zone, instant.getTime() - FLOATING_MARGIN_MS);
  const skipped = new Date(wall.getTime() - jump);
  const onSkippedTime = jump > 0 && instantsOfWallClock(skipped, parsed.zone).length === 0 && instantOfWallClock(skipped, parsed.zone).getTime() === instant.getTime();
  // The booking's own start on a skipped or repeated time: DTSTART, or the step that shares its instant.
  if (!onSkippedTime && instant.getTime() !== booking.startsAt.getTime()) return wall;
  const [occurrence] = expandOccurrences(parsed, booking, { from: instant, before: new Date(instant.getTime() + 1), limit: 1 });
  return occurrence?.recurrenceId ?? wall;
}

/** Whether every occurrence of the rule falls at DTSTART's time of day (no HOURLY steps, no BYHOUR/BYMINUTE/BYSECOND). */
function keepsTimeOfDay(parsed: ParsedRule): boolean {
  const { freq, byhour, byminute, bysecond } = parsed.rule.origOptions;
  return freq !== RRule.HOURLY && byhour == null && byminute == null && bysecond == null;
}

/**
 * Whether calendar apps may place an occurrence elsewhere than the gateway does: its wall-clock start
 * or end (start + duration, which apps add on the wall clock) is skipped or repeated in the zone, or
 * names another instant than the occurrence's (the later 01:30 as the booking's own start, or a
 * daylight-saving change inside the occurrence). libical (ical.js, Thunderbird) reads a repeated time
 * as the later instant and a skipped one with the offset after the gap, and adds a DURATION on the
 * wall clock; RFC 5545 says the first instant, the offset before the gap, and exact hours.
 */
function placedDifferently(occurrence: Occurrence, zone: string): boolean {
  const duration = occurrence.endsAt.getTime() - occurrence.startsAt.getTime();
  const wallEnd = new Date(occurrence.recurrenceId.getTime() + duration);
  return [
    [occurrence.recurrenceId, occurrence.startsAt],
    [wallEnd, occurrence.endsAt],
  ].some(([wall, instant]) => isIrregularWallClock(wall!, zone) || instantOfWallClock(wall!, zone).getTime() !== instant!.getTime());
}

/**
 * The occurrences in [from, before) that calendar apps may place elsewhere (`placedDifferently`):
 * the feed pins each to its instants. Only what can be near a change of the zone's offset is
 * expanded: a rule whose occurrences keep DTSTART's time of day, only when that time lands next to
 * a change.
 */
export function irregularOccurrences(parsed: ParsedRule, booking: Slot, window: { from: Date; before: Date }, excluded: readonly Date[] = []): Occurrence[] {
  const from = Math.max(window.from.getTime(), booking.startsAt.getTime());
  const before = window.before.getTime();
  if (from >= before) return [];
  const duration = booking.endsAt.getTime() - booking.startsAt.getTime();
  const excludedInstants = new Set(excluded.map((date) => date.getTime()));
  const found = new Map<number, Occurrence>();
  const consider = (occurrence: Occurrence) => {
    const startsAt = occurrence.startsAt.getTime();
    if (startsAt >= from && startsAt < before && !excludedInstants.has(startsAt) && placedDifferently(occurrence, parsed.zone)) found.set(startsAt, occurrence);
  };
  consider({ ...booking, recurrenceId: parsed.start });
  const timeOfDay = parsed.start.getTime() - Math.floor(parsed.start.getTime() / DAY_MS) * DAY_MS;
  for (const transition of zoneTransitions(parsed.zone, new Date(from - DAY_MS), new Date(before + duration + DAY_MS))) {
    const irregularFrom = transition.irregularFrom.getTime();
    const irregularBefore = transition.irregularBefore.getTime();
    // Occurrences that start from a day before the change, or earlier by their duration, to a day after it.
    const around = { from: transition.at.getTime() - duration - DAY_MS, before: transition.at.getTime() + DAY_MS };
    if (keepsTimeOfDay(parsed)) {
      // Every occurrence spans [timeOfDay, timeOfDay + duration] on the wall clock of its day: does one reach the skipped or repeated times?
      let touches = false;
      for (let day = Math.floor((irregularFrom - duration) / DAY_MS) * DAY_MS - DAY_MS; day <= irregularBefore && !touches; day += DAY_MS) {
        touches = day + timeOfDay < irregularBefore && day + timeOfDay + duration >= irregularFrom;
      }
      if (!touches) continue;
    }
    const range = { from: new Date(Math.max(from, around.from)), before: new Date(Math.min(before, around.before)) };
    if (range.from < range.before) expandOccurrences(parsed, booking, range).forEach(consider);
  }
  return [...found.values()].sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime());
}

/** A series as the feed's VEVENT carries it: from its first step on, with the rule from there. */
export interface FeedSeries {
  /** The step of the rule the VEVENT starts at (its DTSTART): usually the booking's own start. */
  first: Occurrence;
  /** The RRULE value from `first` on: UNTIL in UTC, COUNT less the steps before `first`. */
  ruleLine: string;
}

/**
 * Where the feed's VEVENT of a series starts, or undefined when the rule gives nothing after the
 * booking's own start. DTSTART is the booking's start when that is a step of the rule (RFC 5545
 * wants it to be). Otherwise the VEVENT starts at the rule's first step and the start is published
 * as an event of its own: calendar apps disagree on a DTSTART off the rule (kept or dropped, counted
 * in COUNT or not). A start on a skipped time that the next step also reaches (a 02:15 start of an
 * hourly series on the spring-forward day is 03:15, the next step) starts the VEVENT at that step,
 * COUNT one less: libical would place the skipped 02:15 an hour early, as an occurrence of its own.
 */
export function feedSeries(parsed: ParsedRule, booking: Slot): FeedSeries | undefined {
  const duration = booking.endsAt.getTime() - booking.startsAt.getTime();
  // Nearly always: the start is the rule's first step, on a wall-clock time that occurs once.
  if (!isIrregularWallClock(parsed.start, parsed.zone) && parsed.rule.between(parsed.start, parsed.start, true).length) {
    return parsed.until && booking.startsAt > parsed.until ? undefined : { first: { ...booking, recurrenceId: parsed.start }, ruleLine: parsed.ruleLine };
  }
  const steps = parsed.rule.between(parsed.start, new Date(parsed.start.getTime() + MAX_SEARCH_MS), true, (_step, index) => index < 4);
  const instants = steps.map((step) => (step.getTime() === parsed.start.getTime() ? booking.startsAt : instantOfWallClock(step, parsed.zone)).getTime());
  const count = parsed.rule.origOptions.count;
  for (const [index, step] of steps.entries()) {
    const startsAt = instants[index]!;
    if (parsed.until && startsAt > parsed.until.getTime()) return undefined;
    if (startsAt < booking.startsAt.getTime()) continue;
    const absorbed = steps.some((later, laterIndex) => laterIndex > index && instants[laterIndex] === startsAt && !isIrregularWallClock(later, parsed.zone));
    if (absorbed) continue;
    const ruleLine = count && index > 0 ? parsed.ruleLine.replace(/(^|;)COUNT=\d+/i, `$1COUNT=${count - index}`) : parsed.ruleLine;
    return { first: { startsAt: new Date(startsAt), endsAt: new Date(startsAt + duration), recurrenceId: new Date(step.getTime()) }, ruleLine };
  }
  return undefined;
}

/** The lines of a stored rule: its DTSTART line (if any) and its RRULE parts, in order. */
function ruleLines(text: string): { dtstart: string | undefined; parts: [string, string][] } {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const dtstart = lines.find((line) => /^DTSTART[;:]/i.test(line));
  const rule = (lines.find((line) => !/^DTSTART[;:]/i.test(line)) ?? '').replace(/^RRULE:/i, '');
  return { dtstart, parts: rule.split(';').map((part) => part.split('=') as [string, string]) };
}

/**
 * A stored rule changed for a moved or split series: its DTSTART line (when it has one) written for `startsAt` in
 * the same zone, COUNT set (or left as it is), UNTIL dropped when COUNT replaces it. The rest of the RRULE stays
 * exactly as the client wrote it.
 */
export function ruleWith(text: string, changes: { startsAt?: Date; count?: number }): string {
  const { dtstart, parts } = ruleLines(text);
  let kept = parts;
  if (changes.count !== undefined) {
    kept = parts.filter(([name]) => !['COUNT', 'UNTIL'].includes(name.toUpperCase()));
    kept.push(['COUNT', String(changes.count)]);
  }
  const rrule = kept.map(([name, value]) => `${name}=${value}`).join(';');
  if (!dtstart || !changes.startsAt) return dtstart ? `${dtstart}\n${rrule}` : rrule;
  const zone = /^DTSTART;TZID=([^:;]+):/i.exec(dtstart)?.[1];
  // utcDateTime writes YYYYMMDDTHHMMSSZ; a floating (wall-clock) Date's UTC fields are the zone's local time.
  const line = zone ? `DTSTART;TZID=${zone}:${utcDateTime(wallClockOf(changes.startsAt, zone)).slice(0, -1)}` : `DTSTART:${utcDateTime(changes.startsAt)}`;
  return `${line}\n${rrule}`;
}

/** The rule's COUNT, if it has one. */
export function countOf(text: string): number | undefined {
  const count = ruleLines(text).parts.find(([name]) => name.toUpperCase() === 'COUNT')?.[1];
  return count === undefined ? undefined : Number(count);
}

/**
 * How many occurrences the series starting with `booking` has before `before` (what a COUNT that ends the series
 * there says: DTSTART counts as the first, RFC 5545 3.3.10).
 */
export function instancesBefore(parsed: ParsedRule, booking: Slot, before: Date): number {
  if (before <= booking.startsAt) return 0;
  return expandOccurrences(parsed, booking, { before }).length;
}

/**
 * `instant` moved as the series' first occurrence moved from `from` to `to`, on the wall clock of `zone`: the same
 * change of wall-clock date and time, so an EXDATE stays on the occurrence it removed. The moved wall-clock time is
 * read as every other one (wall-clock.ts: a skipped time takes the offset before the gap, a repeated one its first instant).
 */
export function shiftedWithSeries(instant: Date, zone: string, from: Date, to: Date): Date {
  const shift = wallClockOf(to, zone).getTime() - wallClockOf(from, zone).getTime();
  return instantOfWallClock(new Date(wallClockOf(instant, zone).getTime() + shift), zone);
}
