import { describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import { instantsOfWallClock } from '../../src/modules/bookings/wall-clock.js';
import { contentLines, escapeText, foldLine, utcDateTime, vtimezoneLines, wallClockDateTime } from '../../src/modules/calendar-feeds/icalendar.js';

const unfold = (text: string) => text.replace(/\r\n /g, '');

describe('iCalendar text', () => {
  it('escapes backslash, semicolon, comma and every kind of newline in TEXT', () => {
    expect(escapeText('a\\b;c,d\ne\r\nf\rg')).toBe('a\\\\b\\;c\\,d\\ne\\nf\\ng');
  });

  it('leaves a line of exactly 75 octets alone and folds one of 76', () => {
    expect(foldLine('A'.repeat(75))).toBe('A'.repeat(75));
    expect(foldLine('A'.repeat(76))).toBe(`${'A'.repeat(75)}\r\n A`);
  });

  it('folds by octets, never inside a UTF-8 character, continuations 74 octets after their space', () => {
    // 'ü' is two octets: 37 of them (74 octets) fit the first line, a 38th would make 76.
    const line = `X:${'ü'.repeat(200)}`;
    const folded = foldLine(line);
    const parts = folded.split('\r\n');
    expect(parts.every((part) => Buffer.byteLength(part) <= 75)).toBe(true);
    expect(parts.slice(1).every((part) => part.startsWith(' '))).toBe(true);
    expect(parts.every((part) => !part.includes('\uFFFD'))).toBe(true);
    expect(unfold(folded)).toBe(line);
  });

  it('ends every content line with CRLF', () => {
    expect(contentLines(['BEGIN:VCALENDAR', 'END:VCALENDAR'])).toBe('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n');
  });

  it('writes instants in UTC and wall-clock times as local DATE-TIMEs', () => {
    expect(utcDateTime(new Date('2030-03-26T08:00:00Z'))).toBe('20300326T080000Z');
    // A wall-clock time travels as a floating Date: its UTC fields are the local fields.
    expect(wallClockDateTime(new Date('2030-03-26T09:00:00Z'))).toBe('20300326T090000');
    expect(wallClockDateTime(new Date('2030-03-31T02:30:00Z'))).toBe('20300331T023000');
  });

  it('writes a VTIMEZONE from the gateway’s own time-zone data, which ical.js reads every local time with as the gateway does', () => {
    // Changes at 00:00 (Santiago, whose rule changed in 2022), a week that a published VTIMEZONE library
    // had wrong (Cairo, 2030), half-hour changes and offsets, Ramadan (Casablanca), none (Kolkata).
    const zones = ['America/New_York', 'Europe/London', 'Australia/Sydney', 'America/St_Johns', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/Santiago', 'Africa/Cairo', 'Africa/Casablanca', 'Asia/Kolkata'];
    for (const zone of zones) {
      const calendar = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:test', ...vtimezoneLines(zone, 2000, 2040), 'END:VCALENDAR'].join('\r\n');
      const timezone = new ICAL.Timezone(new ICAL.Component(ICAL.parse(calendar)).getFirstSubcomponent('vtimezone')!);
      const differing: string[] = [];
      // Every 25 hours through the years the VTIMEZONE covers: each hour of the day in turn, each week several times.
      for (let wall = Date.UTC(2000, 0, 1, 1, 30); wall < Date.UTC(2041, 0, 1); wall += 25 * 3_600_000) {
        const floating = new Date(wall);
        const [instant, ...others] = instantsOfWallClock(floating, zone);
        if (instant === undefined || others.length) continue; // skipped or repeated: the feed pins those occurrences
        const read = new ICAL.Time({ year: floating.getUTCFullYear(), month: floating.getUTCMonth() + 1, day: floating.getUTCDate(), hour: floating.getUTCHours(), minute: floating.getUTCMinutes() }, timezone);
        if (read.toUnixTime() * 1000 !== instant) differing.push(floating.toISOString());
      }
      expect([zone, differing.slice(0, 3)]).toEqual([zone, []]);
    }
  });

  it('has the yearly RRULEs calendar apps expect where a zone follows a pattern, and dates the rest', () => {
    const newYork = vtimezoneLines('America/New_York', 2005, 2040);
    // 2005 and 2006 had the April–October rule: dated; since 2007 the second Sunday of March and first of November.
    expect(newYork.filter((line) => line.startsWith('RRULE:'))).toEqual(['RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU', 'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU']);
    expect(newYork.filter((line) => line.startsWith('DTSTART:'))).toEqual(['DTSTART:20050101T000000', 'DTSTART:20050403T020000', 'DTSTART:20051030T020000', 'DTSTART:20060402T020000', 'DTSTART:20061029T020000', 'DTSTART:20070311T020000', 'DTSTART:20071104T020000']);
    expect(newYork.slice(0, 2)).toEqual(['BEGIN:VTIMEZONE', 'TZID:America/New_York']);
    expect(vtimezoneLines('Asia/Kolkata', 2030, 2040)).toEqual(['BEGIN:VTIMEZONE', 'TZID:Asia/Kolkata', 'BEGIN:STANDARD', 'DTSTART:20300101T000000', 'TZOFFSETFROM:+0530', 'TZOFFSETTO:+0530', 'END:STANDARD', 'END:VTIMEZONE']);
    expect(vtimezoneLines('US/Eastern', 2030, 2040)[1]).toBe('TZID:US/Eastern');
  });
});
