import { describe, expect, it } from '@jest/globals';
import * as fc from 'fast-check';
import {
  expandOccurrences,
  expandRule,
  feedSeries,
  irregularOccurrences,
  MAX_HOURLY_SPAN_DAYS,
  parseNewRule,
  parseRule,
  RecurrenceError,
  recurrenceIdOf,
} from '../../src/modules/bookings/recurrence.js';
import { instantOfWallClock, instantsOfWallClock, zoneTransitions } from '../../src/modules/bookings/wall-clock.js';

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
    expect(byUntil.until?.toISOString()).toBe('2027-01-06T09:00:00.000Z');
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

const starts = (slots: { startsAt: Date }[]) => slots.map((s) => s.startsAt.toISOString());
const hour = (iso: string) => slot(iso, new Date(new Date(iso).getTime() + 3_600_000).toISOString());

describe('UNTIL is an instant (RFC 5545 3.3.10)', () => {
  // 14:00 in New York is 18:00Z in May (EDT).
  const booking = hour('2031-05-06T18:00:00Z');
  const zoned = (rule: string) => `DTSTART;TZID=America/New_York:20310506T140000\nRRULE:${rule}`;

  it('reads a local UNTIL with a zoned DTSTART on that zone’s wall clock and stores it in UTC', () => {
    const parsed = parseNewRule(zoned('FREQ=WEEKLY;UNTIL=20310527T140000'), booking.startsAt);
    expect(parsed.until?.toISOString()).toBe('2031-05-27T18:00:00.000Z');
    expect(parsed.text).toBe('DTSTART;TZID=America/New_York:20310506T140000\nRRULE:FREQ=WEEKLY;UNTIL=20310527T180000Z');
    expect(parsed.ruleLine).toBe('FREQ=WEEKLY;UNTIL=20310527T180000Z');
    expect(starts(expandRule(parsed, booking, { limit: 10 }))).toEqual([
      '2031-05-06T18:00:00.000Z',
      '2031-05-13T18:00:00.000Z',
      '2031-05-20T18:00:00.000Z',
      '2031-05-27T18:00:00.000Z',
    ]);
  });

  it('compares a UTC UNTIL with instants, not with the zone’s wall clock', () => {
    // 17:00Z is 13:00 in New York: before the fourth 14:00 occurrence.
    const parsed = parseNewRule(zoned('FREQ=WEEKLY;UNTIL=20310527T170000Z'), booking.startsAt);
    expect(parsed.text).toBe(zoned('FREQ=WEEKLY;UNTIL=20310527T170000Z'));
    expect(starts(expandRule(parsed, booking, { limit: 10 }))).toHaveLength(3);
  });

  it('keeps a rule without a zone in UTC, a local UNTIL there being UTC too', () => {
    const utc = hour('2031-05-06T14:00:00Z');
    const parsed = parseNewRule('FREQ=DAILY;UNTIL=20310508T140000', utc.startsAt);
    expect(parsed.text).toBe('FREQ=DAILY;UNTIL=20310508T140000Z');
    expect(starts(expandRule(parsed, utc, { limit: 10 }))).toHaveLength(3);
    // A floating DTSTART (no TZID, no Z) is read as UTC: a booking is an instant.
    const floating = parseNewRule('DTSTART:20310506T140000\nRRULE:FREQ=DAILY;UNTIL=20310507T140000Z', utc.startsAt);
    expect(floating.zone).toBe('UTC');
    expect(starts(expandRule(floating, utc, { limit: 10 }))).toHaveLength(2);
  });

  it('refuses a date-only UNTIL in a new rule, and reads a stored one at midnight on the zone’s wall clock', () => {
    expect(() => parseNewRule(zoned('FREQ=WEEKLY;UNTIL=20310527'), booking.startsAt)).toThrow(/UNTIL=20310527 is a date/);
    const stored = parseRule(zoned('FREQ=WEEKLY;UNTIL=20310527'), booking.startsAt);
    expect(stored.until?.toISOString()).toBe('2031-05-27T04:00:00.000Z');
    expect(stored.ruleLine).toBe('FREQ=WEEKLY;UNTIL=20310527T040000Z');
    expect(starts(expandRule(stored, booking, { limit: 10 }))).toHaveLength(3);
  });
});

describe('wall-clock times a daylight-saving change skips or repeats (RFC 5545 3.3.5)', () => {
  it('reads a repeated time as the first instant and a skipped one with the offset before the gap, in every zone', () => {
    const floating = (iso: string) => new Date(`${iso}Z`);
    // luxon picked the later instant in New York and the earlier one in Sydney.
    expect(instantOfWallClock(floating('2030-11-03T01:30:00'), 'America/New_York').toISOString()).toBe('2030-11-03T05:30:00.000Z');
    expect(instantOfWallClock(floating('2030-04-07T02:30:00'), 'Australia/Sydney').toISOString()).toBe('2030-04-06T15:30:00.000Z');
    expect(instantOfWallClock(floating('2030-10-27T01:30:00'), 'Europe/London').toISOString()).toBe('2030-10-27T00:30:00.000Z');
    expect(instantOfWallClock(floating('2030-11-03T01:30:00'), 'America/St_Johns').toISOString()).toBe('2030-11-03T04:00:00.000Z');
    expect(instantsOfWallClock(floating('2030-11-03T01:30:00'), 'America/New_York')).toHaveLength(2);
    expect(instantOfWallClock(floating('2030-03-10T02:30:00'), 'America/New_York').toISOString()).toBe('2030-03-10T07:30:00.000Z');
    expect(instantsOfWallClock(floating('2030-03-10T02:30:00'), 'America/New_York')).toEqual([]);
  });

  it('finds a zone’s changes with the wall-clock times they skip or repeat', () => {
    const changes = zoneTransitions('America/New_York', new Date('2030-01-01T00:00:00Z'), new Date('2031-01-01T00:00:00Z'));
    expect(changes.map((change) => [change.at.toISOString(), change.irregularFrom.toISOString(), change.irregularBefore.toISOString()])).toEqual([
      ['2030-03-10T07:00:00.000Z', '2030-03-10T02:00:00.000Z', '2030-03-10T03:00:00.000Z'],
      ['2030-11-03T06:00:00.000Z', '2030-11-03T01:00:00.000Z', '2030-11-03T02:00:00.000Z'],
    ]);
    expect(zoneTransitions('Asia/Kolkata', new Date('2030-01-01T00:00:00Z'), new Date('2031-01-01T00:00:00Z'))).toEqual([]);
  });

  it('keeps a daily 02:30 series at 02:30 and moves the skipped one to 03:30, naming it 02:30', () => {
    const booking = hour('2030-03-09T07:30:00Z');
    const parsed = parseNewRule('DTSTART;TZID=America/New_York:20300309T023000\nRRULE:FREQ=DAILY;COUNT=3', booking.startsAt);
    const occurrences = expandOccurrences(parsed, booking, { limit: 5 });
    expect(starts(occurrences)).toEqual(['2030-03-09T07:30:00.000Z', '2030-03-10T07:30:00.000Z', '2030-03-11T06:30:00.000Z']);
    expect(occurrences[1]!.recurrenceId.toISOString()).toBe('2030-03-10T02:30:00.000Z');
    expect(recurrenceIdOf(parsed, booking, new Date('2030-03-10T07:30:00Z')).toISOString()).toBe('2030-03-10T02:30:00.000Z');
    expect(recurrenceIdOf(parsed, booking, new Date('2030-03-11T06:30:00Z')).toISOString()).toBe('2030-03-11T02:30:00.000Z');
    // Cancelling it looks from its instant: the step is found though its wall clock (02:30) is before 03:30.
    expect(starts(expandRule(parsed, booking, { from: new Date('2030-03-10T07:30:00Z'), limit: 1 }))).toEqual(['2030-03-10T07:30:00.000Z']);
    const window = { from: new Date('2030-03-01T00:00:00Z'), before: new Date('2030-04-01T00:00:00Z') };
    expect(starts(irregularOccurrences(parsed, booking, window))).toEqual(['2030-03-10T07:30:00.000Z']);
    expect(irregularOccurrences(parsed, booking, window, [new Date('2030-03-10T07:30:00Z')])).toEqual([]);
  });

  it('steps an hourly series on the wall clock: the repeated hour once (the first), the skipped one merged into the next', () => {
    const fall = hour('2030-11-03T03:30:00Z'); // 23:30 EDT on the 2nd
    const back = parseNewRule('DTSTART;TZID=America/New_York:20301102T233000\nRRULE:FREQ=HOURLY;COUNT=5', fall.startsAt);
    expect(starts(expandRule(back, fall, { limit: 10 }))).toEqual([
      '2030-11-03T03:30:00.000Z',
      '2030-11-03T04:30:00.000Z',
      '2030-11-03T05:30:00.000Z', // 01:30 EDT, the first 01:30
      '2030-11-03T07:30:00.000Z', // 02:30 EST
      '2030-11-03T08:30:00.000Z',
    ]);
    const spring = hour('2030-03-10T05:30:00Z'); // 00:30 EST
    const forward = parseNewRule('DTSTART;TZID=America/New_York:20300310T003000\nRRULE:FREQ=HOURLY;COUNT=4', spring.startsAt);
    const occurrences = expandOccurrences(forward, spring, { limit: 10 });
    // 00:30, 01:30, 02:30 (skipped: 03:30 EDT) and 03:30 are one occurrence, named 03:30, which exists.
    expect(starts(occurrences)).toEqual(['2030-03-10T05:30:00.000Z', '2030-03-10T06:30:00.000Z', '2030-03-10T07:30:00.000Z']);
    expect(occurrences[2]!.recurrenceId.toISOString()).toBe('2030-03-10T03:30:00.000Z');
  });

  it('accepts either instant of a repeated DTSTART (startsAt says which), and refuses one its wall clock does not name', () => {
    const dtstart = 'DTSTART;TZID=America/New_York:20301103T013000\nRRULE:FREQ=DAILY;COUNT=2';
    expect(starts(expandRule(parseNewRule(dtstart, new Date('2030-11-03T05:30:00Z')), hour('2030-11-03T05:30:00Z'), { limit: 5 }))).toEqual([
      '2030-11-03T05:30:00.000Z',
      '2030-11-04T06:30:00.000Z',
    ]);
    const later = hour('2030-11-03T06:30:00Z');
    const parsed = parseNewRule(dtstart, later.startsAt);
    expect(starts(expandRule(parsed, later, { from: new Date('2030-11-01T00:00:00Z'), limit: 5 }))).toEqual(['2030-11-03T06:30:00.000Z', '2030-11-04T06:30:00.000Z']);
    // The later 01:30 is pinned in the feed: RFC 5545 readers take 01:30 for the first.
    expect(starts(irregularOccurrences(parsed, later, { from: new Date('2030-11-01T00:00:00Z'), before: new Date('2030-12-01T00:00:00Z') }))).toEqual([
      '2030-11-03T06:30:00.000Z',
    ]);
    expect(() => parseNewRule(dtstart, new Date('2030-11-03T07:30:00Z'))).toThrow(/must be the booking's startsAt/);
    // A skipped DTSTART names the instant after the gap.
    const skipped = 'DTSTART;TZID=America/New_York:20300310T023000\nRRULE:FREQ=DAILY;COUNT=2';
    expect(() => parseNewRule(skipped, new Date('2030-03-10T06:30:00Z'))).toThrow(/must be the booking's startsAt/);
    expect(parseNewRule(skipped, new Date('2030-03-10T07:30:00Z')).start.toISOString()).toBe('2030-03-10T02:30:00.000Z');
  });
});

describe('where the feed starts a series', () => {
  it('at the booking’s start when it is a step of the rule, else at the rule’s first step (the start is an event of its own)', () => {
    const tuesday = hour('2026-01-06T09:00:00Z');
    const offRule = feedSeries(parseRule('FREQ=WEEKLY;BYDAY=MO;COUNT=2', tuesday.startsAt), tuesday);
    expect([offRule?.first.startsAt.toISOString(), offRule?.ruleLine]).toEqual(['2026-01-12T09:00:00.000Z', 'FREQ=WEEKLY;BYDAY=MO;COUNT=2']);
    const onRule = feedSeries(parseRule('FREQ=WEEKLY;BYDAY=TU;COUNT=2', tuesday.startsAt), tuesday);
    expect(onRule?.first.startsAt).toEqual(tuesday.startsAt);
    expect(feedSeries(parseRule('FREQ=WEEKLY;BYDAY=MO;UNTIL=20260110T000000Z', tuesday.startsAt), tuesday)).toBeUndefined();
  });

  it('at the next step when a start on a skipped time is that step’s instant too, COUNT one less', () => {
    // 02:15 on the spring-forward day is 03:15 EDT, the hourly rule's next step.
    const booking = hour('2031-03-09T07:15:00Z');
    const parsed = parseNewRule('DTSTART;TZID=America/New_York:20310309T021500\nRRULE:FREQ=HOURLY;COUNT=5', booking.startsAt);
    const series = feedSeries(parsed, booking);
    expect([series?.first.startsAt.toISOString(), series?.first.recurrenceId.toISOString(), series?.ruleLine]).toEqual([
      '2031-03-09T07:15:00.000Z',
      '2031-03-09T03:15:00.000Z',
      'FREQ=HOURLY;COUNT=4',
    ]);
    expect(starts(expandRule(parsed, booking, { limit: 10 }))).toHaveLength(4);
  });
});

describe('rule parts calendar apps read differently are refused in a new rule', () => {
  const start = new Date('2026-01-05T09:00:00Z');
  it.each([
    ['FREQ=DAILY;BYMONTHDAY=-1', /negative BYMONTHDAY with FREQ=DAILY/],
    ['FREQ=YEARLY;BYMONTHDAY=5', /needs BYMONTH/],
  ])('refuses %p', (text, message) => {
    expect(() => parseNewRule(text, start)).toThrow(message);
    expect(() => parseRule(text, start)).not.toThrow();
  });
  it.each(['FREQ=MONTHLY;BYMONTHDAY=-1', 'FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=5', 'FREQ=DAILY;BYMONTHDAY=5'])('accepts %p', (text) => {
    expect(() => parseNewRule(text, start)).not.toThrow();
  });
});

describe('a series read years after its start', () => {
  const weekday = fc.constantFrom('MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU');
  const rule = fc
    .record({
      // Monthly and yearly rules take the most from DTSTART: twice as often.
      freq: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'MONTHLY', 'YEARLY', 'YEARLY'),
      interval: fc.integer({ min: 1, max: 4 }),
      // Each part left out half the time: the parts rrule.js takes from DTSTART are what a later start must keep.
      byday: fc.option(fc.uniqueArray(weekday, { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 2 }),
      nth: fc.option(fc.constantFrom(1, 2, -1), { nil: undefined, freq: 2 }),
      bymonthday: fc.option(fc.uniqueArray(fc.constantFrom(1, 15, 29, 31, -1), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 2 }),
      bymonth: fc.option(fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 2 }),
      // Parts a stored rule may have though a new one may not.
      extra: fc.constantFrom('', '', '', 'BYSETPOS=-1', 'BYHOUR=9,15', 'WKST=SU'),
    })
    .map((r) => {
      const parts = [`FREQ=${r.freq}`, `INTERVAL=${r.interval}`];
      if (r.byday) parts.push(`BYDAY=${r.byday.map((day) => (r.nth && (r.freq === 'MONTHLY' || r.freq === 'YEARLY') ? `${r.nth}${day}` : day)).join(',')}`);
      if (r.bymonthday && r.freq !== 'WEEKLY') parts.push(`BYMONTHDAY=${r.bymonthday.join(',')}`);
      if (r.bymonth) parts.push(`BYMONTH=${r.bymonth.join(',')}`);
      if (r.extra) parts.push(r.extra);
      return parts.join(';');
    });

  it('has the occurrences it would have stepping from its start (rrule.js is started a whole number of periods later)', () => {
    fc.assert(
      fc.property(
        rule,
        fc.constantFrom('UTC', 'America/New_York', 'Australia/Sydney'),
        fc.integer({ min: 0, max: 800 }),
        fc.integer({ min: 1, max: 800 }),
        (text, zone, startDay, laterDays) => {
          const wall = new Date(Date.UTC(2026, 0, 1, 1, 30) + startDay * 24 * 3_600_000);
          const startsAt = instantOfWallClock(wall, zone);
          const booking = { startsAt, endsAt: new Date(startsAt.getTime() + 1_800_000) };
          const dtstart = `DTSTART;TZID=${zone}:${wall.toISOString().replace(/[-:]/g, '').slice(0, 15)}`;
          let parsed;
          try {
            parsed = parseRule(`${dtstart}\n${text}`, startsAt);
          } catch {
            return true; // a rule rrule.js refuses, or one that exists in no year
          }
          const from = new Date(startsAt.getTime() + laterDays * 24 * 3_600_000);
          const before = new Date(from.getTime() + 90 * 24 * 3_600_000);
          const stepped = expandRule(parsed, booking, { before, limit: 20_000 }).filter((slot) => slot.startsAt >= from);
          expect(starts(expandRule(parsed, booking, { from, before }))).toEqual(starts(stepped));
        },
      ),
      { numRuns: 80, seed: 20261126 },
    );
  });
});
