import { describe, expect, it } from '@jest/globals';
import { expandRule, MAX_HOURLY_SPAN_DAYS, parseRule, RecurrenceError } from '../../src/modules/bookings/recurrence.js';

const slot = (startsAt: string, endsAt: string) => ({ startsAt: new Date(startsAt), endsAt: new Date(endsAt) });
const iso = (slots: { startsAt: Date; endsAt: Date }[]) => slots.map((s) => [s.startsAt.toISOString(), s.endsAt.toISOString()]);

describe('parseRule', () => {
  const start = new Date('2026-01-05T09:00:00Z');

  it.each([
    ['FREQ=WEEKLY;COUNT=3', 'UTC', ['2026-01-05T09:00:00.000Z', '2026-01-12T09:00:00.000Z']],
    ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260301T000000Z', 'UTC', ['2026-01-05T09:00:00.000Z', '2026-01-07T09:00:00.000Z']],
    ['DTSTART;TZID=Europe/Berlin:20260105T100000\nRRULE:FREQ=DAILY;COUNT=2', 'Europe/Berlin', ['2026-01-05T09:00:00.000Z', '2026-01-06T09:00:00.000Z']],
    // The booking's own start is the first occurrence even where the rule would not match it (RFC 5545 DTSTART).
    ['FREQ=YEARLY;BYMONTHDAY=29;BYMONTH=2', 'UTC', ['2026-01-05T09:00:00.000Z', '2028-02-29T09:00:00.000Z']],
  ])('accepts %p, in its zone, with its first occurrences', (text, zone, firstStarts) => {
    const parsed = parseRule(text, start);
    expect(parsed.zone).toBe(zone);
    const first = expandRule(parsed, { startsAt: start, endsAt: new Date(start.getTime() + 3_600_000) }, { limit: 2 });
    expect(first.map((occurrence) => occurrence.startsAt.toISOString())).toEqual(firstStarts);
  });

  it.each([
    ['', /exactly one RRULE/],
    ['garbage', /NAME=VALUE/],
    ['COUNT=3', /FREQ is required/],
    ['FREQ=BOGUS', /not a frequency/],
    ['FREQ=DAILY;COUNT=abc', /COUNT must be a positive integer/],
    ['FREQ=DAILY;INTERVAL=0', /INTERVAL must be a positive integer/],
    ['FREQ=DAILY;COUNT=2;UNTIL=20270101T000000Z', /COUNT and UNTIL/],
    ['FREQ=DAILY;BYDAY=XX', /weekday|BYDAY/],
    ['FREQ=DAILY;FOO=1', /Unknown RRULE property/],
    ['FREQ=DAILY;UNTIL=tomorrow', /UNTIL/],
    ['DTSTART;TZID=Mars/Olympus:20260105T090000\nRRULE:FREQ=DAILY', /time zone/],
    ['DTSTART:20260106T090000Z\nRRULE:FREQ=DAILY', /must be the booking's startsAt/],
    ['EXRULE:FREQ=DAILY\nRRULE:FREQ=DAILY', /not supported/],
    ['FREQ=SECONDLY;BYMONTHDAY=31;BYMONTH=2', /not supported for bookings/],
    ['FREQ=MINUTELY;COUNT=5', /not supported for bookings/],
    ['FREQ=DAILY;BYMONTHDAY=31;BYMONTH=2,4', /exists in no year/],
    ['FREQ=HOURLY;COUNT=5;BYMONTHDAY=30;BYMONTH=2', /exists in no year/],
    // An hourly series must end: COUNT up to a year of hours, or UNTIL within MAX_HOURLY_SPAN_DAYS.
    ['FREQ=HOURLY', /FREQ=HOURLY needs COUNT/],
    [`FREQ=HOURLY;COUNT=${MAX_HOURLY_SPAN_DAYS * 24 + 1}`, /FREQ=HOURLY needs COUNT/],
    ['FREQ=HOURLY;UNTIL=20270106T090001Z', /UNTIL within 366 days/],
  ])('refuses %p', (text, message) => {
    expect(() => parseRule(text, start)).toThrow(RecurrenceError);
    expect(() => parseRule(text, start)).toThrow(message);
  });
});

describe('hourly series', () => {
  const start = new Date('2026-01-05T09:00:00Z');
  it(`accepts COUNT=${MAX_HOURLY_SPAN_DAYS * 24} and an UNTIL exactly ${MAX_HOURLY_SPAN_DAYS} days on`, () => {
    const byCount = parseRule(`FREQ=HOURLY;COUNT=${MAX_HOURLY_SPAN_DAYS * 24}`, start);
    expect(byCount.zone).toBe('UTC');
    expect(byCount.rule.options.count).toBe(MAX_HOURLY_SPAN_DAYS * 24);
    const byUntil = parseRule('FREQ=HOURLY;UNTIL=20270106T090000Z', start);
    expect(byUntil.zone).toBe('UTC');
    expect(byUntil.rule.options.until?.toISOString()).toBe('2027-01-06T09:00:00.000Z');
  });

  it(`have no occurrence more than ${MAX_HOURLY_SPAN_DAYS} days after their start, however rare the rule`, () => {
    const booking = slot('2026-01-05T09:00:00Z', '2026-01-05T09:30:00Z');
    // Matches once a year at most (Feb 29 only in leap years): COUNT=10 would need decades of hours.
    const rule = parseRule('FREQ=HOURLY;COUNT=10;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9', booking.startsAt);
    const slots = expandRule(rule, booking, { limit: 10 });
    expect(slots.map((s) => s.startsAt.toISOString())).toEqual(['2026-01-05T09:00:00.000Z']);
    const later = expandRule(rule, booking, { from: new Date('2040-01-01T00:00:00Z'), limit: 10 });
    expect(later).toEqual([]);
  });
});

describe('expandRule', () => {
  it('expands a weekly rule with COUNT, each occurrence as long as the booking', () => {
    const booking = slot('2026-01-05T09:00:00Z', '2026-01-05T10:30:00Z');
    const slots = expandRule(parseRule('FREQ=WEEKLY;COUNT=3', booking.startsAt), booking, { limit: 10 });
    expect(iso(slots)).toEqual([
      ['2026-01-05T09:00:00.000Z', '2026-01-05T10:30:00.000Z'],
      ['2026-01-12T09:00:00.000Z', '2026-01-12T10:30:00.000Z'],
      ['2026-01-19T09:00:00.000Z', '2026-01-19T10:30:00.000Z'],
    ]);
  });

  it('stops a weekly rule at UNTIL (inclusive)', () => {
    const booking = slot('2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z');
    const slots = expandRule(parseRule('FREQ=WEEKLY;UNTIL=20260119T090000Z', booking.startsAt), booking, { limit: 10 });
    expect(slots.map((s) => s.startsAt.toISOString())).toEqual([
      '2026-01-05T09:00:00.000Z',
      '2026-01-12T09:00:00.000Z',
      '2026-01-19T09:00:00.000Z',
    ]);
  });

  it('keeps wall-clock time across a daylight-saving change when the rule names a TZID', () => {
    // 09:00 in Berlin is 08:00Z in winter (CET) and 07:00Z in summer (CEST); DST starts 2026-03-29.
    const booking = slot('2026-03-27T08:00:00Z', '2026-03-27T09:00:00Z');
    const rule = parseRule('DTSTART;TZID=Europe/Berlin:20260327T090000\nRRULE:FREQ=DAILY;COUNT=4', booking.startsAt);
    expect(iso(expandRule(rule, booking, { limit: 10 }))).toEqual([
      ['2026-03-27T08:00:00.000Z', '2026-03-27T09:00:00.000Z'],
      ['2026-03-28T08:00:00.000Z', '2026-03-28T09:00:00.000Z'],
      ['2026-03-29T07:00:00.000Z', '2026-03-29T08:00:00.000Z'],
      ['2026-03-30T07:00:00.000Z', '2026-03-30T08:00:00.000Z'],
    ]);
  });

  it('without a TZID follows UTC, so the local hour moves', () => {
    const booking = slot('2026-03-27T08:00:00Z', '2026-03-27T09:00:00Z');
    const slots = expandRule(parseRule('FREQ=DAILY;COUNT=4', booking.startsAt), booking, { limit: 10 });
    expect(slots.map((s) => s.startsAt.toISOString().slice(11, 16))).toEqual(['08:00', '08:00', '08:00', '08:00']);
  });

  it('always starts with the booking itself, even where the rule would skip it', () => {
    const tuesday = slot('2026-01-06T09:00:00Z', '2026-01-06T10:00:00Z');
    const slots = expandRule(parseRule('FREQ=WEEKLY;BYDAY=MO;COUNT=2', tuesday.startsAt), tuesday, { limit: 5 });
    expect(slots.map((s) => s.startsAt.toISOString())).toEqual([
      '2026-01-06T09:00:00.000Z',
      '2026-01-12T09:00:00.000Z',
      '2026-01-19T09:00:00.000Z',
    ]);
  });

  it('honours from, before, limit and excluded occurrences', () => {
    const booking = slot('2026-01-01T12:00:00Z', '2026-01-01T13:00:00Z');
    const rule = parseRule('FREQ=DAILY', booking.startsAt);
    const slots = expandRule(rule, booking, {
      from: new Date('2026-01-03T00:00:00Z'),
      before: new Date('2026-01-08T00:00:00Z'),
      excluded: [new Date('2026-01-04T12:00:00Z')],
      limit: 3,
    });
    expect(slots.map((s) => s.startsAt.toISOString().slice(0, 10))).toEqual(['2026-01-03', '2026-01-05', '2026-01-06']);
  });

  it('refuses to expand an endless rule without a bound', () => {
    const booking = slot('2026-01-01T12:00:00Z', '2026-01-01T13:00:00Z');
    expect(() => expandRule(parseRule('FREQ=DAILY', booking.startsAt), booking)).toThrow(/limit or an end/);
  });
});
