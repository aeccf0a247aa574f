import { DateTime, IANAZone } from 'luxon';

/**
 * Wall-clock times of an IANA zone and the instants they name, as RFC 5545 §3.3.5 reads a
 * `TZID=…` DATE-TIME. A wall-clock time is carried as a "floating" Date whose UTC fields are the
 * local fields (what rrule.js expands). Pure functions, no I/O.
 *
 * - A time that occurs twice (clocks go back) names the first of the two instants (summer time):
 *   `TZID=America/New_York:20071104T013000` is 01:30 EDT.
 * - A time that does not occur (clocks go forward) is read with the offset before the gap:
 *   `TZID=America/New_York:20070311T023000` is 03:30 EDT.
 *
 * luxon does neither consistently (in a repeated hour it picks either instant, depending on the
 * zone), so the reading is made here from the zone's offsets.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 3_600_000;
/** Offsets are read this far either side of a wall-clock time: farther than any change of a zone's offset (Samoa skipped a whole day). */
const PROBE_MS = 36 * 3_600_000;

const zones = new Map<string, IANAZone>();

function zoneOf(name: string): IANAZone {
  let zone = zones.get(name);
  if (!zone) {
    zone = IANAZone.create(name);
    zones.set(name, zone);
  }
  return zone;
}

/** Whether `name` is an IANA zone this runtime knows. */
export const isKnownZone = (name: string): boolean => zoneOf(name).isValid;

interface YearOfChanges {
  /** The offset at the start of the UTC year. */
  initial: number;
  /** Each change in the year: the instant and the offset from then on. */
  changes: { at: number; offset: number }[];
}

const years = new Map<string, YearOfChanges>();

/**
 * A zone's offset changes in one UTC year, read from the runtime's time-zone data (through luxon) day
 * by day and narrowed to the millisecond: some 400 readings once per zone and year, after which an
 * offset costs a lookup instead of a reading (an expansion reads several per occurrence).
 */
function yearOfChanges(zone: string, year: number): YearOfChanges {
  const key = `${zone} ${year}`;
  let found = years.get(key);
  if (!found) {
    const read = (instant: number) => zoneOf(zone).offset(instant) * MINUTE_MS;
    const from = Date.UTC(year, 0, 1);
    const to = Date.UTC(year + 1, 0, 1);
    const changes: YearOfChanges['changes'] = [];
    let previous = from;
    let previousOffset = read(from);
    const initial = previousOffset;
    for (let probe = from + DAY_MS; previous < to; probe += DAY_MS) {
      const at = Math.min(probe, to);
      const offset = read(at);
      if (offset !== previousOffset) {
        let [low, high] = [previous, at];
        while (high - low > 1) {
          const middle = Math.floor((low + high) / 2);
          if (read(middle) === previousOffset) low = middle;
          else high = middle;
        }
        changes.push({ at: high, offset });
      }
      previous = at;
      previousOffset = offset;
    }
    found = { initial, changes };
    years.set(key, found);
  }
  return found;
}

/** The zone's offset from UTC at `instantMs`, in milliseconds. */
export function offsetAt(zone: string, instantMs: number): number {
  const { initial, changes } = yearOfChanges(zone, new Date(instantMs).getUTCFullYear());
  let offset = initial;
  for (const change of changes) {
    if (change.at > instantMs) break;
    offset = change.offset;
  }
  return offset;
}

/** The instants whose wall clock in `zone` reads `floating`: none (skipped), one, or two (repeated), earliest first. */
export function instantsOfWallClock(floating: Date, zone: string): number[] {
  const wall = floating.getTime();
  const earlier = offsetAt(zone, wall - PROBE_MS);
  // No change of offset near this time (nearly always): one instant.
  if (earlier === offsetAt(zone, wall + PROBE_MS)) return [wall - earlier];
  const offsets = new Set([earlier, offsetAt(zone, wall), offsetAt(zone, wall + PROBE_MS)]);
  const instants = [...offsets].map((offset) => wall - offset).filter((instant) => offsetAt(zone, instant) === wall - instant);
  return [...new Set(instants)].sort((a, b) => a - b);
}

/** The instant a wall-clock time names (RFC 5545 §3.3.5): the first of a repeated time, a skipped one read with the offset before the gap. */
export function instantOfWallClock(floating: Date, zone: string): Date {
  const [first] = instantsOfWallClock(floating, zone);
  if (first !== undefined) return new Date(first);
  return new Date(floating.getTime() - offsetAt(zone, floating.getTime() - PROBE_MS));
}

/** The wall clock of `instant` in `zone`, as a floating Date. */
export function wallClockOf(instant: Date, zone: string): Date {
  return new Date(instant.getTime() + offsetAt(zone, instant.getTime()));
}

/** Whether the wall-clock time occurs other than exactly once in `zone` (skipped or repeated): readers of a feed may place it differently. */
export function isIrregularWallClock(floating: Date, zone: string): boolean {
  return instantsOfWallClock(floating, zone).length !== 1;
}

export interface ZoneTransition {
  /** The instant the offset changes. */
  at: Date;
  /** Wall-clock times that are skipped (clocks forward) or repeated (clocks back), as floating times: [from, before). */
  irregularFrom: Date;
  irregularBefore: Date;
}

/**
 * The offset changes of `zone` in [from, before) (changes of one zone are months apart: two within a
 * day would be seen as one).
 */
export function zoneTransitions(zone: string, from: Date, before: Date): ZoneTransition[] {
  const transitions: ZoneTransition[] = [];
  for (let year = from.getUTCFullYear(); year <= before.getUTCFullYear(); year++) {
    for (const change of yearOfChanges(zone, year).changes) {
      if (change.at < from.getTime() || change.at >= before.getTime()) continue;
      const wallBefore = change.at + offsetAt(zone, change.at - 1);
      const wallAfter = change.at + change.offset;
      transitions.push({ at: new Date(change.at), irregularFrom: new Date(Math.min(wallBefore, wallAfter)), irregularBefore: new Date(Math.max(wallBefore, wallAfter)) });
    }
  }
  return transitions;
}

/** A UTC DATE-TIME (`20300107T090000Z`). */
export function utcDateTime(instant: Date): string {
  return DateTime.fromJSDate(instant, { zone: 'UTC' }).toFormat("yyyyMMdd'T'HHmmss'Z'");
}
