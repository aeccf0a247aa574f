import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import * as fc from 'fast-check';
import { DateTime } from 'luxon';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { TestClock } from '../../factories/clock.js';
import { CancelBookingDocument, CancelOccurrenceDocument, CreateBookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * The gateway and the calendar feed agree on every occurrence of a series: generated rules (zones
 * with daylight-saving changes and without, starts on and next to the changes, every frequency,
 * COUNT and UNTIL in UTC and local time, INTERVAL, BYDAY with and without ordinals, BYMONTHDAY with
 * negatives and the 31st, starts off the rule, occurrences cancelled through the API) are created
 * through GraphQL; their occurrences from the API and their booked slots must be exactly what ical.js
 * expands from the feed fetched over HTTP. Seeded: a failure prints FUZZ_SEED and FUZZ_CASE, which replay
 * it alone. `FUZZ_RUNS=500 npm test -- feed-agreement` runs more.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
/** Replays one case of the seed's corpus (its index, printed with a failure). */
const ONLY = process.env.FUZZ_CASE === undefined ? undefined : Number(process.env.FUZZ_CASE);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const HORIZON_MS = 366 * DAY_MS;
const OCCURRENCES_LIMIT = 200;
/** Each agent takes this many cases (cancelled after each, so its calendar is free again). */
const CASES_PER_AGENT = 25;

/**
 * Zones with daylight-saving changes at 01:00, 02:00, 03:00 and midnight, half-hour and 45-minute
 * offsets, half-hour changes, rules changed lately (Santiago 2022, Cairo 2023), changes that follow
 * Ramadan (Casablanca), and none.
 */
const ZONES = [
  'America/New_York',
  'Europe/London',
  'Australia/Sydney',
  'America/St_Johns',
  'Asia/Kolkata',
  'UTC',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/Santiago',
  'Europe/Berlin',
  'Africa/Cairo',
  'Africa/Casablanca',
] as const;
type Zone = (typeof ZONES)[number];
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;
const SHORTEST_MONTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

interface Occurrence {
  startsAt: string;
  endsAt: string;
}

// ——— The client's side: wall-clock times and the instants they name (RFC 5545 3.3.5), from luxon's offsets.

const offsetMs = (zone: string, instant: number) => DateTime.fromMillis(instant, { zone }).offset * 60_000;

/** The instant a client sends for a wall-clock time: either of a repeated time (`later` picks), a skipped one read with the offset before the gap. */
function instantOf(wall: DateTime, zone: string, later = false): number {
  const local = wall.toMillis();
  const offsets = new Set([offsetMs(zone, local - 36 * HOUR_MS), offsetMs(zone, local + 36 * HOUR_MS)]);
  const instants = [...offsets].map((offset) => local - offset).filter((instant) => offsetMs(zone, instant) === local - instant).sort((a, b) => a - b);
  if (!instants.length) return local - offsetMs(zone, local - 36 * HOUR_MS);
  return (later ? instants.at(-1) : instants[0])!;
}

/** The zone's offset changes in [from, to), to start series next to them. */
function transitionsOf(zone: string, from: number, to: number): number[] {
  const found: number[] = [];
  for (let at = from; at < to; at += DAY_MS) {
    if (offsetMs(zone, at) === offsetMs(zone, at + DAY_MS)) continue;
    let [low, high] = [at, at + DAY_MS];
    while (high - low > 60_000) {
      const middle = Math.floor((low + high) / 2);
      if (offsetMs(zone, middle) === offsetMs(zone, low)) low = middle;
      else high = middle;
    }
    found.push(high);
  }
  return found;
}

const WINDOW_FROM = Date.UTC(2030, 0, 1);
const WINDOW_TO = Date.UTC(2033, 0, 1);
const TRANSITIONS = new Map(ZONES.map((zone) => [zone, transitionsOf(zone, WINDOW_FROM, WINDOW_TO)]));

// ——— Generated cases.

const raw = fc.record({
  zone: fc.option(fc.constantFrom(...ZONES), { nil: null, freq: 8 }),
  nearChange: fc.integer({ min: 0, max: 9 }).map((n) => n < 7),
  change: fc.nat(),
  dayFromChange: fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.integer({ min: -3, max: 3 }), weight: 1 }),
  hourFromChange: fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.integer({ min: -2, max: 2 }), weight: 1 }),
  dayOfWindow: fc.integer({ min: 0, max: 1090 }),
  hour: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 3 }), weight: 3 }, { arbitrary: fc.integer({ min: 0, max: 23 }), weight: 2 }),
  minute: fc.constantFrom(0, 15, 30, 45),
  laterOfRepeated: fc.boolean(),
  freq: fc.oneof(
    { arbitrary: fc.constant('DAILY' as const), weight: 3 },
    { arbitrary: fc.constant('WEEKLY' as const), weight: 3 },
    { arbitrary: fc.constant('MONTHLY' as const), weight: 3 },
    { arbitrary: fc.constant('YEARLY' as const), weight: 1 },
    { arbitrary: fc.constant('HOURLY' as const), weight: 2 },
  ),
  interval: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  byday: fc.constantFrom('none', 'plain', 'ordinal'),
  weekdays: fc.subarray([...WEEKDAYS], { maxLength: 3 }),
  ordinal: fc.constantFrom(1, 2, 3, 4, -1, -2),
  bymonthday: fc.boolean(),
  monthDays: fc.subarray([1, 15, 28, 29, 30, 31, -1, -2], { maxLength: 3 }),
  negativeDay: fc.boolean(),
  otherMonth: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
  bymonth: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  wkst: fc.constantFrom(undefined, undefined, 'SU', 'WE'),
  offRule: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  end: fc.constantFrom('count', 'until-utc', 'until-local', 'none'),
  count: fc.integer({ min: 1, max: 30 }),
  untilSteps: fc.integer({ min: 0, max: 15 }),
  untilJitterMinutes: fc.constantFrom(0, 0, 0, -60, 60, -1, 1),
  quarterHours: fc.integer({ min: 1, max: 8 }),
  clockLeadHours: fc.integer({ min: 0, max: 48 }),
  cancel: fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 3 }),
  cancelNearChange: fc.boolean(),
  // Read up to three years later, after the nightly job has booked the series a year ahead of then.
  readAfterDays: fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 1100 }), weight: 1 }),
});
type Raw = typeof raw extends fc.Arbitrary<infer T> ? T : never;

interface Case {
  rrule: string;
  startsAt: string;
  endsAt: string;
  now: string;
  zone: string;
  cancel: Raw['cancel'];
  cancelNearChange: boolean;
  readAfterDays: number | undefined;
}

const unique = <T>(values: readonly T[]) => [...new Set(values)];

/** A rule and a start for it, within what the gateway accepts; the start is on the rule unless `offRule`. */
function buildCase(r: Raw): Case {
  const zone: Zone = r.zone ?? 'UTC';
  const changes = TRANSITIONS.get(zone)!;
  const change = r.nearChange && changes.length ? changes[r.change % changes.length]! : undefined;
  // Next to a change: its day (or a few days off) and the hour its skipped or repeated wall-clock times begin (or hours off).
  const changeWall = change === undefined ? undefined : DateTime.fromMillis(Math.min(change + offsetMs(zone, change - HOUR_MS), change + offsetMs(zone, change)), { zone: 'UTC' });
  const day = changeWall ? changeWall.startOf('day').plus({ days: r.dayFromChange }) : DateTime.fromMillis(WINDOW_FROM, { zone }).startOf('day').plus({ days: r.dayOfWindow });
  const hour = changeWall ? Math.min(23, Math.max(0, changeWall.hour + r.hourFromChange)) : r.hour;
  // The start's wall-clock fields, as a floating DateTime (in UTC) so that arithmetic stays on the wall clock.
  const wall = DateTime.fromObject({ year: day.year, month: day.month, day: day.day, hour, minute: r.minute }, { zone: 'UTC' });
  const startsAt = instantOf(wall, zone, r.laterOfRepeated);
  const weekday = WEEKDAYS[wall.weekday % 7]!;
  const dayOfMonth = wall.day;
  const daysInMonth = wall.daysInMonth!;
  const interval = r.freq === 'HOURLY' ? (r.interval ?? 1) * 2 - 1 : r.interval;

  /** The start's own value in a set, or (off the rule) the set without it but never empty. */
  const withStart = <T>(own: T, others: readonly T[], fallback: T): T[] => {
    const values = unique([own, ...others]);
    if (!r.offRule) return values;
    const without = values.filter((value) => value !== own);
    return without.length ? without : [fallback];
  };
  const otherWeekday = WEEKDAYS[(wall.weekday + 1) % 7]!;
  const parts: string[] = [`FREQ=${r.freq}`];
  if (interval) parts.push(`INTERVAL=${interval}`);
  const plainDays = () => parts.push(`BYDAY=${withStart(weekday, r.weekdays, otherWeekday).join(',')}`);
  const ownMonthDay = r.negativeDay ? dayOfMonth - daysInMonth - 1 : dayOfMonth;
  const months = (own: number) => unique([own, ...(r.otherMonth && dayOfMonth <= SHORTEST_MONTHS[r.otherMonth - 1]! ? [r.otherMonth] : [])]);
  const byMonth = () => parts.push(`BYMONTH=${months(wall.month).join(',')}`);
  switch (r.freq) {
    case 'WEEKLY':
      if (r.byday !== 'none') plainDays();
      if (r.bymonth) byMonth();
      if (r.wkst) parts.push(`WKST=${r.wkst}`);
      break;
    case 'DAILY':
      if (r.byday === 'plain') plainDays();
      // Positive only: a negative BYMONTHDAY in a daily rule is refused (libical ignores it).
      if (r.bymonthday) parts.push(`BYMONTHDAY=${withStart(dayOfMonth, r.monthDays.filter((d) => d > 0), dayOfMonth === 1 ? 2 : 1).join(',')}`);
      if (r.bymonth) byMonth();
      break;
    case 'HOURLY':
      if (r.byday === 'plain') plainDays();
      if (r.bymonth) byMonth();
      break;
    case 'MONTHLY':
      if (r.byday === 'plain') plainDays();
      if (r.byday === 'ordinal') {
        const nth = r.negativeDay ? -(Math.floor((daysInMonth - dayOfMonth) / 7) + 1) : Math.ceil(dayOfMonth / 7);
        const others = r.weekdays.map((other) => `${r.ordinal}${other}`);
        parts.push(`BYDAY=${withStart(`${nth}${weekday}`, others, `${nth}${otherWeekday}`).join(',')}`);
      }
      if (r.bymonthday && r.byday === 'none') parts.push(`BYMONTHDAY=${withStart(ownMonthDay, r.monthDays, dayOfMonth === 15 ? 1 : 15).join(',')}`);
      break;
    case 'YEARLY': {
      // A date some years lack (February 29) is refused in a yearly rule: every twelve months is the portable way.
      if (dayOfMonth > SHORTEST_MONTHS[wall.month - 1]!) {
        parts.splice(0, parts.length, 'FREQ=MONTHLY', `INTERVAL=${12 * (interval ?? 1)}`, `BYMONTHDAY=${dayOfMonth}`);
        break;
      }
      const shortest = Math.min(...months(wall.month).map((month) => SHORTEST_MONTHS[month - 1]!));
      if (r.bymonthday) {
        parts.push(`BYMONTH=${months(wall.month).join(',')}`);
        parts.push(`BYMONTHDAY=${withStart(dayOfMonth, r.monthDays.filter((d) => d > 0 && d <= shortest), dayOfMonth === 15 ? 1 : 15).join(',')}`);
      } else if (r.byday === 'ordinal') {
        // Numbered days count within the month with BYMONTH (RFC 5545), which a yearly rule then needs.
        const nth = r.negativeDay ? -(Math.floor((daysInMonth - dayOfMonth) / 7) + 1) : Math.ceil(dayOfMonth / 7);
        parts.push(`BYMONTH=${months(wall.month).join(',')}`);
        parts.push(`BYDAY=${withStart(`${nth}${weekday}`, r.weekdays.map((other) => `${r.ordinal}${other}`), `${nth}${otherWeekday}`).join(',')}`);
      } else if (r.byday === 'plain') {
        plainDays();
        if (r.bymonth) byMonth();
      } else if (r.bymonth) byMonth();
      break;
    }
  }
  const end = r.freq === 'HOURLY' && r.end === 'none' ? 'count' : r.end;
  if (end === 'count') parts.push(`COUNT=${r.freq === 'HOURLY' ? r.count * 2 : r.count}`);
  if (end === 'until-utc' || end === 'until-local') {
    // On an occurrence's wall clock (UNTIL is inclusive), or a minute or an hour either side of it.
    const unit = { DAILY: 'days', WEEKLY: 'weeks', MONTHLY: 'months', YEARLY: 'years', HOURLY: 'hours' }[r.freq];
    const steps = r.freq === 'HOURLY' ? r.untilSteps * 3 : r.untilSteps;
    const untilWall = wall.plus({ [unit]: steps * (interval ?? 1), minutes: r.untilJitterMinutes });
    parts.push(
      end === 'until-local'
        ? `UNTIL=${untilWall.toFormat("yyyyMMdd'T'HHmmss")}`
        : `UNTIL=${DateTime.fromMillis(instantOf(untilWall, zone), { zone: 'UTC' }).toFormat("yyyyMMdd'T'HHmmss'Z'")}`,
    );
  }
  const rule = parts.join(';');
  const rrule = r.zone ? `DTSTART;TZID=${r.zone}:${wall.toFormat("yyyyMMdd'T'HHmmss")}\nRRULE:${rule}` : rule;
  // An hourly series' steps come as close as 30 minutes across a half-hour change (Lord Howe): it must not overlap itself.
  const minutes = r.freq === 'HOURLY' ? Math.min(r.quarterHours * 15, interval! * 60 - 45) : r.quarterHours * 15;
  return {
    rrule,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + minutes * 60_000).toISOString(),
    now: new Date(startsAt - r.clockLeadHours * HOUR_MS).toISOString(),
    zone,
    cancel: r.cancel,
    cancelNearChange: r.cancelNearChange,
    readAfterDays: r.readAfterDays,
  };
}

// ——— ical.js, in a worker so that a rule it loops on fails the test instead of hanging it.

class IcalReader {
  private worker = new Worker(new URL('../../support/ical-expand.mjs', import.meta.url));

  expand(ics: string, from: number, before: number): Promise<Record<string, [string, string][]>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        void this.worker.terminate();
        this.worker = new Worker(new URL('../../support/ical-expand.mjs', import.meta.url));
        reject(new Error('ical.js did not finish expanding the feed in 10 s'));
      }, 10_000);
      this.worker.once('message', (answer: { occurrences?: Record<string, [string, string][]>; error?: string }) => {
        clearTimeout(timer);
        if (answer.error) reject(new Error(`ical.js: ${answer.error}`));
        else resolve(answer.occurrences!);
      });
      this.worker.postMessage({ ics, from, before, maxSteps: 5_000 });
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

describe('the calendar feed and the gateway agree on every occurrence (ical.js)', () => {
  let t: TestApp;
  let base: string;
  let root: AgentWithToken;
  let reader: IcalReader;
  const clock = new TestClock(new Date('2031-01-01T00:00:00Z'));

  beforeAll(async () => {
    // The job queue runs: a series read later has had its slots booked ahead by the nightly job.
    t = await startTestApp({ clock });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    root = await bootstrapAgent(t);
    reader = new IcalReader();
  });
  afterAll(async () => {
    await reader.close();
    await t.close();
  });

  const calendarOf = async () => {
    const agent = await createAgent(t, root);
    const response = await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) });
    expect(response.statusCode).toBe(201);
    return { agent, feedPath: (response.json() as { path: string }).path };
  };
  /** Runs the nightly `extend_booking_horizons` job now (on the test clock) and waits for it. */
  const extendHorizons = async () => {
    await t.query(`select graphile_worker.add_job('extend_booking_horizons')`);
    for (let waited = 0; ; waited += 50) {
      const [row] = await t.query<{ left: number }>(`select count(*)::int as left from graphile_worker.jobs where task_identifier = 'extend_booking_horizons'`);
      if (row?.left === 0) return;
      if (waited > 10_000) throw new Error('extend_booking_horizons did not run within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const occurrencesOf = async (agent: AgentWithToken, bookingId: string): Promise<Occurrence[]> => {
    const response = await t.rest({ method: 'GET', url: `/api/bookings/${bookingId}/occurrences?limit=${OCCURRENCES_LIMIT}`, headers: bearer(agent.token) });
    expect(response.statusCode).toBe(200);
    return (response.json() as { items: Occurrence[] }).items;
  };
  /** What the feed says about one booking, as ical.js reads it: the series' VEVENT, its overrides and an off-rule start. */
  const feedOccurrences = async (feedPath: string, bookingId: string, from: number, before: number) => {
    const response = await fetch(`${base}${feedPath}`);
    expect(response.status).toBe(200);
    const ics = await response.text();
    const byUid = await reader.expand(ics, from, before);
    const occurrences = [...(byUid[`${bookingId}@agent-gateway`] ?? []), ...(byUid[`${bookingId}-start@agent-gateway`] ?? [])]
      .map(([startsAt, endsAt]) => ({ startsAt, endsAt }))
      .sort((a, b) => a.startsAt.localeCompare(b.startsAt));
    return { ics, occurrences };
  };

  /** What the corpus reached: each kind must occur, or the generator no longer tests it. */
  const reached = { pinned: 0, offRuleStart: 0, removed: 0, localUntil: 0, repeatedHourStart: 0, readLater: 0 };

  /** Creates the series, cancels some occurrences, and compares the API, the booked slots and ical.js over the horizon. */
  const check = async (agent: AgentWithToken, feedPath: string, c: Case, index: number) => {
    clock.set(c.now);
    const created = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt: c.startsAt, endsAt: c.endsAt, rrule: c.rrule } }, bearer(agent.token));
    if (created.errors) throw new Error(`FUZZ_SEED=${SEED} FUZZ_CASE=${index}: ${JSON.stringify(c)} was refused: ${JSON.stringify(created.errors)}`);
    const booking = created.data!.createBooking;
    try {
      const before = await occurrencesOf(agent, booking.id);
      const nearChange = (occurrence: Occurrence) =>
        (TRANSITIONS.get(c.zone as Zone) ?? []).some((change) => Math.abs(Date.parse(occurrence.startsAt) - change) < 12 * HOUR_MS);
      const toCancel = unique([
        ...c.cancel.map((fraction) => before[Math.floor(fraction * before.length)]!),
        ...(c.cancelNearChange ? before.filter(nearChange).slice(0, 1) : []),
      ]);
      for (const occurrence of toCancel) {
        const cancelled = await t.gql(CancelOccurrenceDocument, { bookingId: booking.id, startsAt: occurrence.startsAt }, bearer(agent.token));
        expect(cancelled.errors).toBeUndefined();
      }

      if (c.readAfterDays) {
        clock.set(new Date(Date.parse(c.now) + c.readAfterDays * DAY_MS));
        await extendHorizons();
      }
      const from = clock.now().getTime();
      const until = from + HORIZON_MS;
      const api = await occurrencesOf(agent, booking.id);
      const slots = await t.query<{ starts_at: Date; ends_at: Date }>('select starts_at, ends_at from booking_slots where booking_id = $1 order by starts_at', [
        booking.id,
      ]);
      const { ics, occurrences: feed } = await feedOccurrences(feedPath, booking.id, from, until);
      const inHorizon = (occurrence: Occurrence) => Date.parse(occurrence.startsAt) >= from && Date.parse(occurrence.startsAt) < until;
      // The API answers at most OCCURRENCES_LIMIT: compare as far as it reached.
      const apiEnd = api.length === OCCURRENCES_LIMIT ? Date.parse(api.at(-1)!.startsAt) : Number.POSITIVE_INFINITY;
      const booked = slots.map((slot) => ({ startsAt: slot.starts_at.toISOString(), endsAt: slot.ends_at.toISOString() })).filter(inHorizon);
      const unfolded = ics.replace(/\r\n[ \t]/g, '');
      const ownEvents = unfolded.split('BEGIN:VEVENT').filter((event) => event.includes(`UID:${booking.id}`));
      try {
        expect(api.filter(inHorizon)).toEqual(feed.filter((occurrence) => Date.parse(occurrence.startsAt) <= apiEnd));
        expect(booked).toEqual(feed);
        // RFC 5545 3.3.10: with a zoned (or UTC) DTSTART, UNTIL is a UTC date-time.
        for (const value of unfolded.match(/UNTIL=[^;\r\n]*/g) ?? []) expect(value).toMatch(/^UNTIL=\d{8}T\d{6}Z$/);
      } catch (error) {
        const events = ownEvents.map((event) => `BEGIN:VEVENT${event}`.replace(/\r\n/g, '\n')).join('');
        throw new Error(`FUZZ_SEED=${SEED} FUZZ_CASE=${index}: ${JSON.stringify(c)}\nits events in the feed:\n${events}\n${(error as Error).message}`, { cause: error });
      }
      if (ownEvents.some((event) => event.includes('RECURRENCE-ID'))) reached.pinned++;
      if (ownEvents.some((event) => event.includes(`UID:${booking.id}-start@`))) reached.offRuleStart++;
      if (ownEvents.some((event) => event.includes('EXDATE'))) reached.removed++;
      if (/UNTIL=\d{8}T\d{6}(;|$)/m.test(c.rrule)) reached.localUntil++;
      if (c.readAfterDays && api.length) reached.readLater++;
      if (Date.parse(c.startsAt) !== instantOf(DateTime.fromMillis(Date.parse(c.startsAt) + offsetMs(c.zone, Date.parse(c.startsAt)), { zone: 'UTC' }), c.zone)) {
        reached.repeatedHourStart++;
      }
    } finally {
      const cancelled = await t.gql(CancelBookingDocument, { id: booking.id }, bearer(agent.token));
      expect(cancelled.errors).toBeUndefined();
    }
  };

  it('for a local UNTIL with a zoned DTSTART (the example of issue 24): four occurrences everywhere, UNTIL stored in UTC', async () => {
    const { agent, feedPath } = await calendarOf();
    clock.set('2031-05-01T00:00:00Z');
    const rrule = 'DTSTART;TZID=America/New_York:20310506T140000\nRRULE:FREQ=WEEKLY;UNTIL=20310527T140000';
    const created = await t.gql(
      CreateBookingDocument,
      { input: { agentId: agent.id, startsAt: '2031-05-06T14:00:00-04:00', endsAt: '2031-05-06T15:00:00-04:00', rrule } },
      bearer(agent.token),
    );
    expect(created.errors).toBeUndefined();
    const booking = created.data!.createBooking;
    expect(booking.rrule).toBe('DTSTART;TZID=America/New_York:20310506T140000\nRRULE:FREQ=WEEKLY;UNTIL=20310527T180000Z');
    const expected = ['06', '13', '20', '27'].map((day) => ({ startsAt: `2031-05-${day}T18:00:00.000Z`, endsAt: `2031-05-${day}T19:00:00.000Z` }));
    expect(await occurrencesOf(agent, booking.id)).toEqual(expected);
    const slots = await t.query<{ starts_at: Date }>('select starts_at from booking_slots where booking_id = $1 order by starts_at', [booking.id]);
    expect(slots.map((slot) => slot.starts_at.toISOString())).toEqual(expected.map((slot) => slot.startsAt));
    const { ics, occurrences } = await feedOccurrences(feedPath, booking.id, Date.parse('2031-05-01T00:00:00Z'), Date.parse('2032-05-01T00:00:00Z'));
    expect(ics).toContain('RRULE:FREQ=WEEKLY;UNTIL=20310527T180000Z\r\n');
    expect(occurrences).toEqual(expected);
  });

  it(`for ${RUNS} generated series (seed ${SEED})`, async () => {
    const cases = fc.sample(raw, { numRuns: RUNS, seed: SEED }).map(buildCase);
    let calendar = await calendarOf();
    for (const [index, c] of cases.entries()) {
      if (ONLY !== undefined && index !== ONLY) continue;
      if (index > 0 && index % CASES_PER_AGENT === 0) calendar = await calendarOf();
      await check(calendar.agent, calendar.feedPath, c, index);
    }
    // The corpus reaches what it is for: occurrences pinned around daylight-saving changes, starts off
    // the rule, removed occurrences, local UNTILs and series starting at the later of a repeated hour.
    console.log(`feed agreement (seed ${SEED}, ${RUNS} series): ${JSON.stringify(reached)}`);
    // (A handful of runs, as a FUZZ_RUNS=5 smoke run, need not reach every kind.)
    if (RUNS >= 50 && ONLY === undefined) for (const [kind, count] of Object.entries(reached)) expect([kind, count > 0]).toEqual([kind, true]);
  }, Math.max(120_000, RUNS * 1_000));
});
