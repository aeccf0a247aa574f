import { describe, expect, it } from '@jest/globals';
import { contentLines, escapeText, foldLine, utcDateTime, vtimezoneLines, wallClockDateTime } from '../../src/modules/scheduling/icalendar.js';

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

  it('names a VTIMEZONE as the rule does, and has none for a zone it does not know', () => {
    const berlin = vtimezoneLines('Europe/Berlin');
    expect(berlin[0]).toBe('BEGIN:VTIMEZONE');
    expect(berlin).toContain('TZID:Europe/Berlin');
    expect(berlin.at(-1)).toBe('END:VTIMEZONE');
    expect(vtimezoneLines('UTC')).toContain('TZID:UTC');
    expect(vtimezoneLines('Nowhere/Else')).toEqual([]);
  });
});
