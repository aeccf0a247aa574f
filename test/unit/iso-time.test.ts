import { describe, expect, it } from '@jest/globals';
import * as fc from 'fast-check';
import { parseRfc3339DateTime, toIsoString } from '../../src/platform/iso-time.js';

describe('toIsoString', () => {
  it('equals Date#toISOString across the whole representable range', () => {
    const samples = [
      0, 1, -1, Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(2000, 1, 29), Date.UTC(2030, 2, 4, 8, 5, 9, 7), Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1), Date.UTC(0, 0, 1) - 1, Date.UTC(-1, 5, 6), -8.64e15, 8.64e15, Date.UTC(12, 0, 1) - Date.UTC(1912, 0, 1) + Date.UTC(12, 0, 1),
    ];
    for (let i = 0; i < 2000; i++) samples.push(Math.round((Math.random() * 2 - 1) * 8.64e15));
    for (const time of samples) expect(toIsoString(new Date(time))).toBe(new Date(time).toISOString());
  });

  it('throws like the built-in for an invalid date', () => {
    expect(() => toIsoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('parseRfc3339DateTime', () => {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  /** Any RFC 3339 date-time: the calendar's days, fractions of any length, either case, any offset. */
  const dateTime = fc
    .record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 31 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
      fraction: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
      t: fc.constantFrom('T', 't'),
      offset: fc.oneof(fc.constantFrom('Z', 'z', '+00:00', '-00:00'), fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`)),
    })
    .filter(({ year, month, day }) => day <= new Date(Date.UTC(2000, month, 0)).getUTCDate() && !(month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))))
    .map(({ year, month, day, hour, minute, second, fraction, t, offset }) => `${pad(year, 4)}-${pad(month)}-${pad(day)}${t}${pad(hour)}:${pad(minute)}:${pad(second)}${fraction === undefined ? '' : `.${fraction}`}${offset}`);

  it('names the instant Date reads from every RFC 3339 date-time, lower-case t and z included', () => {
    fc.assert(
      fc.property(dateTime, (text) => {
        // Adapters then read the instant with `new Date(text)`: the two must agree on every accepted text.
        expect(parseRfc3339DateTime(text)?.getTime()).toBe(new Date(text).getTime());
      }),
      { numRuns: 5_000, seed: 20261126 },
    );
    expect(parseRfc3339DateTime('2031-05-06t14:00:00z')).toEqual(new Date('2031-05-06T14:00:00Z'));
    expect(parseRfc3339DateTime('0050-01-01T00:00:00Z')?.getUTCFullYear()).toBe(50);
  });

  it.each([
    ['a space for T', '2031-05-06 14:00:00Z'],
    ['an offset without its colon', '2031-05-06T14:00:00+0100'],
    ['an offset of hours only', '2031-05-06T14:00:00+01'],
    ['no offset', '2031-05-06T14:00:00'],
    ['no seconds', '2031-05-06T14:00Z'],
    ['a leap second', '2031-12-31T23:59:60Z'],
    ['hour 24', '2031-05-06T24:00:00Z'],
    ['30 February', '2031-02-30T09:00:00Z'],
    ['29 February of a common year', '2031-02-29T09:00:00Z'],
    ['month 13', '2031-13-01T09:00:00Z'],
    ['day 0', '2031-05-00T09:00:00Z'],
    ['an offset of 24 hours', '2031-05-06T14:00:00+24:00'],
    ['an offset of 60 minutes', '2031-05-06T14:00:00+01:60'],
    ['an expanded year', '+275760-09-13T00:00:00Z'],
    ['an empty fraction', '2031-05-06T14:00:00.Z'],
    ['text after it', '2031-05-06T14:00:00Z\n'],
    ['a date alone', '2031-05-06'],
    ['other digits', '٢٠٣١-05-06T14:00:00Z'],
  ])('refuses %s', (_, text) => {
    expect(parseRfc3339DateTime(text)).toBeUndefined();
  });
});
