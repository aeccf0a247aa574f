import { DateTime } from 'luxon';
import { tzlib_get_ical_block } from 'timezones-ical-library';

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

/** A UTC DATE-TIME (`20300107T090000Z`). */
export function utcDateTime(instant: Date): string {
  return DateTime.fromJSDate(instant, { zone: 'UTC' }).toFormat("yyyyMMdd'T'HHmmss'Z'");
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

/**
 * The VTIMEZONE component of an IANA zone (from timezones-ical-library, kept up to date with the tz
 * database), with its TZID as the rule names it: the library answers aliases under their canonical
 * name (`UTC` as `Etc/UTC`), and a TZID parameter must match a VTIMEZONE's TZID exactly. Empty for a
 * zone the library does not know; the event then keeps its TZID, which calendar apps resolve as an
 * IANA name. Cached: there are a few hundred zones.
 */
export function vtimezoneLines(zone: string): readonly string[] {
  let lines = vtimezones.get(zone);
  if (!lines) {
    const found = tzlib_get_ical_block(zone);
    const block = Array.isArray(found) ? found[0] : '';
    lines = block
      ? block
          .split(/\r?\n/)
          .filter(Boolean)
          .map((line) => (/^TZID:/.test(line) ? `TZID:${zone}` : /^X-LIC-LOCATION:/.test(line) ? `X-LIC-LOCATION:${zone}` : line))
      : [];
    vtimezones.set(zone, lines);
  }
  return lines;
}
