import { DateTime } from 'luxon';
import { offsetAt, utcDateTime, zoneTransitions } from '../bookings/index.js';

export { utcDateTime };

/**
 * The few pieces of RFC 5545 text the calendar feed needs, written here rather than through a
 * generator library: the feed copies each stored rule's RRULE line and TZID verbatim (a generator
 * rebuilds rules from its own options, and would have to be fed a parsed and re-serialised rule),
 * and the rest is a handful of properties. Pure functions, no I/O.
 */

const CRLF = '\r\n';
/** RFC 5545 3.1: content lines are folded so that no line is longer than 75 octets, excluding the CRLF. */
const MAX_LINE_OCTETS = 75;

/** TEXT values (3.3.11): backslash, semicolon, comma and newlines are escaped. */
export function escapeText(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r\n|\r|\n/g, '\\n');
}

/**
 * Folds one content line at 75 octets: each continuation starts with a space, which counts against
 * its 75. Never splits a UTF-8 sequence (a character is moved whole to the next line).
 */
export function foldLine(line: string): string {
  if (Buffer.byteLength(line, 'utf8') <= MAX_LINE_OCTETS) return line;
  const parts: string[] = [];
  let current = '';
  let currentOctets = 0;
  for (const character of line) {
    const octets = Buffer.byteLength(character, 'utf8');
    const limit = parts.length === 0 ? MAX_LINE_OCTETS : MAX_LINE_OCTETS - 1;
    if (currentOctets + octets > limit) {
      parts.push(current);
      current = '';
      currentOctets = 0;
    }
    current += character;
    currentOctets += octets;
  }
  parts.push(current);
  return parts.join(`${CRLF} `);
}

/** Content lines joined with CRLF, each folded, the last one terminated too. */
export function contentLines(lines: readonly string[]): string {
  return lines.map(foldLine).join(CRLF) + CRLF;
}


/**
 * A local DATE-TIME (`20300326T090000`) from a wall-clock time carried as a floating Date (its UTC
 * fields are the local fields), for a property with `;TZID=zone`. The wall-clock time is the one
 * the rule gave an occurrence, which for a skipped time (02:30 on the spring-forward day) is not
 * the wall clock of its instant.
 */
export function wallClockDateTime(floating: Date): string {
  return DateTime.fromJSDate(floating, { zone: 'UTC' }).toFormat("yyyyMMdd'T'HHmmss");
}

const vtimezones = new Map<string, readonly string[]>();
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

/** A UTC offset as TZOFFSETFROM/TZOFFSETTO write it: `+0530`, `-0330`, `+1245`. */
function utcOffsetValue(offsetMs: number): string {
  const minutes = Math.abs(offsetMs) / 60_000;
  return `${offsetMs < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`;
}

interface Change {
  /** Local time of the change on the old offset (an observance's DTSTART), as a floating Date. */
  onset: Date;
  from: number;
  to: number;
  /** The change as a yearly rule: the same month, weekday of the month and local time every year. */
  yearly: string;
}

function changesOf(zone: string, fromYear: number, throughYear: number): Change[] {
  return zoneTransitions(zone, new Date(Date.UTC(fromYear, 0, 1)), new Date(Date.UTC(throughYear + 1, 0, 1))).map((transition) => {
    const from = offsetAt(zone, transition.at.getTime() - 1);
    const to = offsetAt(zone, transition.at.getTime());
    const onset = new Date(transition.at.getTime() + from);
    const day = onset.getUTCDate();
    const daysInMonth = new Date(Date.UTC(onset.getUTCFullYear(), onset.getUTCMonth() + 1, 0)).getUTCDate();
    const ordinal = day + 7 > daysInMonth ? -1 : Math.ceil(day / 7);
    const time = wallClockDateTime(onset).slice(9);
    const yearly = `FREQ=YEARLY;BYMONTH=${onset.getUTCMonth() + 1};BYDAY=${ordinal}${WEEKDAYS[onset.getUTCDay()]} at ${time} ${from}>${to}`;
    return { onset, from, to, yearly };
  });
}

/**
 * The VTIMEZONE of an IANA zone for local times from `fromYear` on, from the same time-zone data the
 * gateway reads wall-clock times with (the runtime's, through luxon), so that a calendar app that
 * trusts the feed's VTIMEZONE (ical.js, Thunderbird) converts every local time as the gateway does,
 * past rule changes included (a published library of VTIMEZONEs had Santiago change a week early in
 * 2030 and Cairo end summer time a week early). The changes of the latest years, while they follow
 * one yearly pattern (the second Sunday of March at 02:00…), are STANDARD and DAYLIGHT observances
 * with an RRULE, the form every calendar app reads; earlier changes, and a zone without a pattern,
 * are an observance each, through `throughYear`. Cached per zone and years.
 */
export function vtimezoneLines(zone: string, fromYear: number, throughYear: number): readonly string[] {
  const key = `${zone} ${fromYear} ${throughYear}`;
  let lines = vtimezones.get(key);
  if (lines) return lines;
  const changes = changesOf(zone, fromYear, throughYear);
  const yearOf = (change: Change) => change.onset.getUTCFullYear();
  const patternOf = (year: number) => changes.filter((change) => yearOf(change) === year).map((change) => change.yearly).join('\n');
  // The latest run of years whose changes are the last year's, year after year.
  const pattern = patternOf(throughYear);
  let patternFrom = throughYear + 1;
  if (pattern) while (patternFrom > fromYear && patternOf(patternFrom - 1) === pattern) patternFrom--;
  // A pattern of one year is no pattern (Morocco's changes follow Ramadan): those changes stay dated.
  if (patternFrom >= throughYear) patternFrom = throughYear + 1;
  const observance = (change: Pick<Change, 'onset' | 'from' | 'to'>, rule?: string) => {
    const kind = change.to > change.from ? 'DAYLIGHT' : 'STANDARD';
    return [
      `BEGIN:${kind}`,
      `DTSTART:${wallClockDateTime(change.onset)}`,
      `TZOFFSETFROM:${utcOffsetValue(change.from)}`,
      `TZOFFSETTO:${utcOffsetValue(change.to)}`,
      ...(rule ? [`RRULE:${rule}`] : []),
      `END:${kind}`,
    ];
  };
  const initial = offsetAt(zone, Date.UTC(fromYear, 0, 1));
  lines = [
    'BEGIN:VTIMEZONE',
    `TZID:${zone}`,
    // The offset from the first local time on, until the first change.
    ...observance({ onset: new Date(Date.UTC(fromYear, 0, 1)), from: initial, to: initial }),
    ...changes.flatMap((change) => {
      if (yearOf(change) < patternFrom) return observance(change);
      return yearOf(change) === patternFrom ? observance(change, change.yearly.split(' ')[0]) : [];
    }),
    'END:VTIMEZONE',
  ];
  vtimezones.set(key, lines);
  return lines;
}
