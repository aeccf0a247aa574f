import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { CALENDAR_FEED_LIMITS, MAX_CALENDAR_FEEDS_PER_AGENT } from '../../../src/modules/calendar-feeds/calendar-feed.service.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import {
  CalendarFeedsDocument,
  CancelOccurrenceDocument,
  CreateBookingDocument,
  CreateCalendarFeedDocument,
  RevokeCalendarFeedDocument,
} from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2030-01-01T00:00:00.000Z';
const YEAR_MS = 366 * 24 * 3_600_000;

interface Occurrence {
  startsAt: string;
  endsAt: string;
}

/** The feed as a calendar app reads it: ical.js parses it, with only the VTIMEZONEs the feed carries. */
function parseFeed(body: string) {
  const calendar = new ICAL.Component(ICAL.parse(body));
  for (const vtimezone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(new ICAL.Timezone(vtimezone));
  return calendar;
}

/** ical.js's expansion of one VEVENT: occurrences starting in [from, before). */
function expandEvent(vevent: ICAL.Component, from: Date, before: Date): Occurrence[] {
  const event = new ICAL.Event(vevent);
  const durationMs = event.duration.toSeconds() * 1000;
  const iterator = event.iterator();
  const occurrences: Occurrence[] = [];
  for (let next = iterator.next(); next; next = iterator.next()) {
    const startsAt = next.toJSDate();
    if (startsAt >= before) break;
    if (startsAt >= from) occurrences.push({ startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + durationMs).toISOString() });
  }
  return occurrences;
}

const uidOf = (bookingId: string) => `${bookingId}@agent-gateway`;
const findEvent = (calendar: ICAL.Component, bookingId: string) =>
  calendar.getAllSubcomponents('vevent').find((vevent) => vevent.getFirstPropertyValue('uid') === uidOf(bookingId));

describe('iCalendar feeds', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const createFeed = async (agent: AgentWithToken) => {
    const response = await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) });
    expect(response.statusCode).toBe(201);
    return response.json() as { id: string; created_at: string; token: string; path: string };
  };
  const getFeed = (agentId: string, token: string | undefined, headers: Record<string, string> = {}) =>
    t.rest({ method: 'GET', url: `/api/agents/${agentId}/calendar.ics${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`, headers });
  const createSeries = async (agent: AgentWithToken, startsAt: string, endsAt: string, rrule: string) => {
    const created = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt, endsAt, rrule } }, bearer(agent.token));
    expect(created.errors).toBeUndefined();
    return created.data!.createBooking;
  };
  const occurrencesOf = async (agent: AgentWithToken, bookingId: string): Promise<Occurrence[]> => {
    const response = await t.rest({ method: 'GET', url: `/api/bookings/${bookingId}/occurrences?limit=200`, headers: bearer(agent.token) });
    expect(response.statusCode).toBe(200);
    return response.json().items;
  };

  it('publishes confirmed bookings whose occurrences, expanded by ical.js for the next year, are the gateway’s, DST included', async () => {
    // A name with every TEXT character to escape, and multi-octet characters past 75 octets to fold.
    const name = `Ops; on-call, "Berlin" \\ team, ${'Zürich '.repeat(12)}`;
    const agent = await createAgent(t, root, name);
    // Series that began before now: the feed's DTSTART is in the past, its RRULE carries it forward.
    clock.set('2029-11-01T00:00:00Z');
    const berlinStart = DateTime.fromObject({ year: 2029, month: 11, day: 6, hour: 9 }, { zone: 'Europe/Berlin' });
    const berlinRule = `DTSTART;TZID=Europe/Berlin:${berlinStart.toFormat("yyyyMMdd'T'HHmmss")}\nRRULE:FREQ=WEEKLY;BYDAY=TU`;
    const berlin = await createSeries(agent, berlinStart.toUTC().toISO()!, berlinStart.plus({ minutes: 90 }).toUTC().toISO()!, berlinRule);
    const daily = await createSeries(agent, '2029-12-20T15:00:00Z', '2029-12-20T15:30:00Z', 'FREQ=DAILY;COUNT=30');
    clock.set(NOW);
    const single = await createBooking(t, agent, '2030-02-01T10:00:00Z', '2030-02-01T11:00:00Z');
    // One Tuesday removed in summer time: an EXDATE on the zone's wall clock.
    const removed = DateTime.fromObject({ year: 2030, month: 6, day: 4, hour: 9 }, { zone: 'Europe/Berlin' }).toUTC().toISO()!;
    const cancelled = await t.gql(CancelOccurrenceDocument, { bookingId: berlin.id, startsAt: removed }, bearer(agent.token));
    expect(cancelled.errors).toBeUndefined();

    const feed = await createFeed(agent);
    expect(feed.token).toMatch(/^cal_[A-Za-z0-9_-]{43}$/);
    expect(feed.path).toBe(`/api/agents/${agent.id}/calendar.ics?token=${feed.token}`);
    const stored = await t.query<{ token_hash: string }>('select token_hash from calendar_feeds where id = $1', [feed.id]);
    expect(stored).toEqual([{ token_hash: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(stored[0]!.token_hash).not.toContain(feed.token);

    t.sql.reset();
    const response = await t.rest({ method: 'GET', url: feed.path });
    // One round trip: the token's feed, its agent and the bookings in one named statement.
    expect(t.sql.statements).toHaveLength(1);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(response.headers['x-calendar-truncated']).toBeUndefined();

    // RFC 5545 framing: CRLF line ends, no line longer than 75 octets, TEXT escaped.
    const lines = response.body.split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines.every((line) => !line.includes('\n') && Buffer.byteLength(line) <= 75)).toBe(true);
    const calendar = parseFeed(response.body);
    // ical.js unfolds X- properties but leaves their value as sent: the escaped TEXT, whole again.
    const escapedName = name.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,');
    expect(calendar.getFirstPropertyValue('x-wr-calname')).toBe(escapedName);
    expect(escapedName.startsWith('Ops\\; on-call\\, "Berlin" \\\\ team\\, Zürich')).toBe(true);
    expect(response.body).toContain('X-WR-CALNAME:Ops\\; on-call\\, "Berlin" \\\\ team\\, Zürich');
    expect(calendar.getAllSubcomponents('vevent')).toHaveLength(3);
    expect(calendar.getAllSubcomponents('vtimezone').map((vtimezone) => vtimezone.getFirstPropertyValue('tzid'))).toEqual(['Europe/Berlin']);

    // The series is one VEVENT with the rule, zone and removed occurrence as stored.
    const berlinEvent = findEvent(calendar, berlin.id)!;
    expect(berlinEvent.getFirstProperty('dtstart')!.getParameter('tzid')).toBe('Europe/Berlin');
    expect(berlinEvent.getFirstPropertyValue('dtstart')!.toString()).toBe('2029-11-06T09:00:00');
    expect(berlinEvent.getFirstPropertyValue('rrule')!.toString()).toBe('FREQ=WEEKLY;BYDAY=TU');
    expect(berlinEvent.getFirstProperty('exdate')!.getParameter('tzid')).toBe('Europe/Berlin');
    expect(berlinEvent.getFirstPropertyValue('status')).toBe('CONFIRMED');

    const from = clock.now();
    const before = new Date(from.getTime() + YEAR_MS);
    for (const booking of [berlin, daily, single]) {
      const expected = (await occurrencesOf(agent, booking.id)).filter((slot) => new Date(slot.startsAt) < before);
      expect(expected.length).toBeGreaterThan(0);
      expect(expandEvent(findEvent(calendar, booking.id)!, from, before)).toEqual(expected);
    }
    // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer, both sides of both changes.
    const berlinStarts = expandEvent(berlinEvent, from, before).map((slot) => slot.startsAt);
    expect(berlinStarts).toEqual(expect.arrayContaining(['2030-03-26T08:00:00.000Z', '2030-04-02T07:00:00.000Z', '2030-10-22T07:00:00.000Z', '2030-10-29T08:00:00.000Z']));
    expect(berlinStarts).not.toContain(removed);
    // 366 days from Tuesday 2030-01-01 hold 53 Tuesdays (through 2031-01-01); one was removed.
    expect(berlinStarts).toHaveLength(53 - 1);
  });

  it('answers 304 to the ETag it sent until the calendar changes', async () => {
    const agent = await createAgent(t, root);
    await createBooking(t, agent, '2030-03-01T10:00:00Z', '2030-03-01T11:00:00Z');
    const feed = await createFeed(agent);
    const first = await t.rest({ method: 'GET', url: feed.path });
    const etag = first.headers.etag as string;

    t.sql.reset();
    const unchanged = await t.rest({ method: 'GET', url: feed.path, headers: { 'if-none-match': etag } });
    expect(t.sql.statements).toHaveLength(1);
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.body).toBe('');
    expect(unchanged.headers.etag).toBe(etag);
    expect((await t.rest({ method: 'GET', url: feed.path, headers: { 'if-none-match': `"other", W/${etag}` } })).statusCode).toBe(304);

    await createBooking(t, agent, '2030-03-02T10:00:00Z', '2030-03-02T11:00:00Z');
    const changed = await t.rest({ method: 'GET', url: feed.path, headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(parseFeed(changed.body).getAllSubcomponents('vevent')).toHaveLength(2);
  });

  it(`lists a cancellation as STATUS:CANCELLED for ${CALENDAR_FEED_LIMITS.cancelledVisibleDays} days after it`, async () => {
    const agent = await createAgent(t, root);
    const booking = await createBooking(t, agent, '2030-04-01T10:00:00Z', '2030-04-01T11:00:00Z');
    expect((await t.rest({ method: 'DELETE', url: `/api/bookings/${booking.id}`, headers: bearer(agent.token) })).statusCode).toBe(204);
    const feed = await createFeed(agent);
    try {
      const eventOf = async () => findEvent(parseFeed((await t.rest({ method: 'GET', url: feed.path })).body), booking.id);
      const cancelledEvent = await eventOf();
      expect(cancelledEvent?.getFirstPropertyValue('status')).toBe('CANCELLED');
      // SEQUENCE is the booking's version (its ETag) less one: created at version 1 (SEQUENCE 0), cancelled at 2.
      const current = await t.rest({ method: 'GET', url: `/api/bookings/${booking.id}`, headers: bearer(agent.token) });
      expect(current.headers.etag).toBe('"2"');
      expect(cancelledEvent?.getFirstPropertyValue('sequence')).toBe(1);
      clock.set(new Date(new Date(NOW).getTime() + (CALENDAR_FEED_LIMITS.cancelledVisibleDays - 1) * 86_400_000));
      expect(await eventOf()).toBeDefined();
      clock.set(new Date(new Date(NOW).getTime() + (CALENDAR_FEED_LIMITS.cancelledVisibleDays + 1) * 86_400_000));
      expect(await eventOf()).toBeUndefined();
    } finally {
      clock.set(NOW);
    }
  });

  it('refuses a missing, wrong, revoked or foreign feed token in the error shape of every route, and never takes one token for the other', async () => {
    const agent = await createAgent(t, root);
    const other = await createAgent(t, root);
    const feed = await createFeed(agent);
    const othersFeed = await createFeed(other);

    const missing = await getFeed(agent.id, undefined);
    expect([missing.statusCode, missing.json().error]).toEqual([401, 'unauthorized']);
    const wrong = await getFeed(agent.id, `cal_${'x'.repeat(43)}`);
    expect([wrong.statusCode, wrong.json().error]).toEqual([401, 'unauthorized']);
    // The API token does not open the feed, in the URL or as a header.
    const apiTokenAsFeed = await getFeed(agent.id, agent.token);
    expect([apiTokenAsFeed.statusCode, apiTokenAsFeed.json().error]).toEqual([401, 'unauthorized']);
    expect((await getFeed(agent.id, undefined, bearer(agent.token))).statusCode).toBe(401);
    // The feed token is no API credential.
    const feedTokenAsApi = await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(feed.token) });
    expect([feedTokenAsApi.statusCode, feedTokenAsApi.json().error]).toEqual([401, 'unauthorized']);
    const feedTokenAsGql = await t.gql(CalendarFeedsDocument, {}, bearer(feed.token));
    expect(feedTokenAsGql.errors?.[0]?.extensions?.code).toBe('unauthorized');
    // Another agent's feed token opens that agent's feed only.
    const foreign = await getFeed(agent.id, othersFeed.token);
    expect([foreign.statusCode, foreign.json().error]).toEqual([403, 'forbidden']);
    expect((await getFeed('not-a-uuid', feed.token)).statusCode).toBe(403);
    expect((await getFeed(other.id, othersFeed.token)).statusCode).toBe(200);
    expect((await getFeed(other.id.toUpperCase(), othersFeed.token)).statusCode).toBe(200);

    // Revoking: the owner only, then the URL stops working at once.
    const notYours = await t.rest({ method: 'DELETE', url: `/api/calendar-feeds/${feed.id}`, headers: bearer(other.token) });
    expect([notYours.statusCode, notYours.json().error]).toEqual([403, 'forbidden']);
    const viaGql = await t.gql(RevokeCalendarFeedDocument, { id: feed.id }, bearer(other.token));
    expect(viaGql.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect((await getFeed(agent.id, feed.token)).statusCode).toBe(200);
    expect((await t.rest({ method: 'DELETE', url: `/api/calendar-feeds/${feed.id}`, headers: bearer(agent.token) })).statusCode).toBe(204);
    const revoked = await getFeed(agent.id, feed.token);
    expect([revoked.statusCode, revoked.json().error]).toEqual([401, 'unauthorized']);
    const again = await t.rest({ method: 'DELETE', url: `/api/calendar-feeds/${feed.id}`, headers: bearer(agent.token) });
    expect([again.statusCode, again.json().error]).toEqual([404, 'not_found']);
  });

  it(`keeps ${MAX_CALENDAR_FEEDS_PER_AGENT} feeds per agent and refuses the next with limit_exceeded, in REST and GraphQL`, async () => {
    const agent = await createAgent(t, root);
    const created = [];
    for (let i = 0; i < MAX_CALENDAR_FEEDS_PER_AGENT - 1; i++) created.push(await createFeed(agent));
    const tenth = await t.gql(CreateCalendarFeedDocument, {}, bearer(agent.token));
    expect(tenth.errors).toBeUndefined();
    expect(tenth.data!.createCalendarFeed.token).toMatch(/^cal_/);

    const eleventh = await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) });
    expect([eleventh.statusCode, eleventh.json().error]).toEqual([409, 'limit_exceeded']);
    const eleventhViaGql = await t.gql(CreateCalendarFeedDocument, {}, bearer(agent.token));
    expect(eleventhViaGql.errors?.[0]?.extensions?.code).toBe('limit_exceeded');

    const listed = await t.gql(CalendarFeedsDocument, {}, bearer(agent.token));
    // All created at the same test-clock instant, so listed by id.
    expect(listed.data!.calendarFeeds.map((feed) => feed.id)).toEqual([...created.map((feed) => feed.id), tenth.data!.createCalendarFeed.feed.id].sort());
    const listedViaRest = (await t.rest({ method: 'GET', url: '/api/calendar-feeds', headers: bearer(agent.token) })).json();
    expect(listedViaRest.items).toHaveLength(MAX_CALENDAR_FEEDS_PER_AGENT);
    expect(JSON.stringify(listedViaRest)).not.toContain('cal_');

    // A revoked feed makes room.
    const revoked = await t.gql(RevokeCalendarFeedDocument, { id: created[0]!.id }, bearer(agent.token));
    expect(revoked.data!.revokeCalendarFeed).toBe(true);
    expect((await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) })).statusCode).toBe(201);
  });

  it(`serves at most ${CALENDAR_FEED_LIMITS.maxEvents} events, dropping the longest-ended first and saying so`, async () => {
    const agent = await createAgent(t, root);
    const feed = await createFeed(agent);
    // Rows written directly: the booking cap (500) keeps the API from making this many live bookings.
    const insert = (count: number, firstHour: number) =>
      t.query(
        `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
         select gen_random_uuid(), $1, s, s + interval '30 minutes', 'confirmed', null, '[]', $2, s + interval '30 minutes'
           from generate_series($3::timestamptz, $3::timestamptz + ($4::int - 1) * interval '1 hour', interval '1 hour') s`,
        [agent.id, NOW, new Date(new Date(NOW).getTime() + firstHour * 3_600_000), count],
      );
    await insert(CALENDAR_FEED_LIMITS.maxEvents, 2);

    const full = await t.rest({ method: 'GET', url: feed.path });
    expect(full.statusCode).toBe(200);
    expect(full.headers['x-calendar-truncated']).toBeUndefined();
    expect(parseFeed(full.body).getAllSubcomponents('vevent')).toHaveLength(CALENDAR_FEED_LIMITS.maxEvents);

    // One more, ending before all the others: it qualifies, and is the one left out.
    await insert(1, 1);
    const over = await t.rest({ method: 'GET', url: feed.path });
    expect(over.statusCode).toBe(200);
    expect(over.headers['x-calendar-truncated']).toBe('true');
    const starts = parseFeed(over.body)
      .getAllSubcomponents('vevent')
      .map((vevent) => (vevent.getFirstPropertyValue('dtstart') as ICAL.Time).toJSDate().getTime());
    expect(starts).toHaveLength(CALENDAR_FEED_LIMITS.maxEvents);
    expect(Math.min(...starts)).toBe(new Date(NOW).getTime() + 2 * 3_600_000);
    expect(Buffer.byteLength(over.body)).toBeLessThan(400 * 1024);
  });

  it(`counts a series' pinned occurrences against the ${CALENDAR_FEED_LIMITS.maxEvents} VEVENTs, keeping a booking's VEVENTs together`, async () => {
    const agent = await createAgent(t, root);
    const feed = await createFeed(agent);
    // 01:30 in New York occurs twice on 2030-11-03: the series' occurrence then is pinned by a second VEVENT.
    const series = await createSeries(agent, '2030-11-02T05:30:00Z', '2030-11-02T06:00:00Z', 'DTSTART;TZID=America/New_York:20301102T013000\nRRULE:FREQ=DAILY;COUNT=3');
    const insert = (count: number, firstHour: number) =>
      t.query(
        `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
         select gen_random_uuid(), $1, s, s + interval '30 minutes', 'confirmed', null, '[]', $2, s + interval '30 minutes'
           from generate_series($3::timestamptz, $3::timestamptz + ($4::int - 1) * interval '1 hour', interval '1 hour') s`,
        [agent.id, NOW, new Date(new Date(NOW).getTime() + firstHour * 3_600_000), count],
      );
    const vevents = (body: string) => parseFeed(body).getAllSubcomponents('vevent');
    await insert(CALENDAR_FEED_LIMITS.maxEvents - 2, 2);

    const full = await t.rest({ method: 'GET', url: feed.path });
    expect(full.headers['x-calendar-truncated']).toBeUndefined();
    expect(vevents(full.body)).toHaveLength(CALENDAR_FEED_LIMITS.maxEvents);
    const seriesEvents = vevents(full.body).filter((vevent) => vevent.getFirstPropertyValue('uid') === uidOf(series.id));
    expect(seriesEvents.map((vevent) => vevent.getFirstProperty('recurrence-id')?.getFirstValue()?.toString() ?? 'series')).toEqual(['series', '2030-11-03T01:30:00']);
    expect((seriesEvents[1]!.getFirstPropertyValue('dtstart') as ICAL.Time).toJSDate().toISOString()).toBe('2030-11-03T05:30:00.000Z');

    // One more booking, ending before all others: the VEVENTs are one too many, and it is the one left out.
    await insert(1, 1);
    const over = await t.rest({ method: 'GET', url: feed.path });
    expect(over.headers['x-calendar-truncated']).toBe('true');
    expect(vevents(over.body)).toHaveLength(CALENDAR_FEED_LIMITS.maxEvents);
    expect(vevents(over.body).filter((vevent) => vevent.getFirstPropertyValue('uid') === uidOf(series.id))).toHaveLength(2);
    const starts = vevents(over.body).map((vevent) => (vevent.getFirstPropertyValue('dtstart') as ICAL.Time).toJSDate().getTime());
    expect(Math.min(...starts)).toBe(new Date(NOW).getTime() + 2 * 3_600_000);
  });
});
