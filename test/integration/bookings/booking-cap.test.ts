import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { CancelBookingDocument, CancelOccurrenceDocument, CreateBookingDocument, OccurrencesDocument, PreviewBookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2030-06-15T12:00:00.000Z';
const CAP = 5;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Daily half-hour series that started yesterday, each at its own hour so they never overlap. */
function dailySeriesFromYesterday(agent: AgentWithToken, hour: number, rrule = 'FREQ=DAILY') {
  const start = new Date(Date.parse('2030-06-14T00:00:00Z') + hour * HOUR);
  return { agentId: agent.id, startsAt: start.toISOString(), endsAt: new Date(start.getTime() + HOUR / 2).toISOString(), rrule };
}

/**
 * The cap's kept count (agent_live_bookings) against the bookings themselves: for every agent counted,
 * the confirmed bookings whose live_until lies after its watermark, whichever writer changed them.
 */
async function expectKeptCountsExact(t: TestApp): Promise<void> {
  const drift = await t.query(
    `select c.agent_id, c.live, (select count(*)::int from bookings b
                                  where b.agent_id = c.agent_id and b.status = 'confirmed' and b.live_until > c.counted_after) as exact
       from agent_live_bookings c`,
  );
  expect(drift.filter((row) => row.live !== row.exact)).toEqual([]);
}

describe(`the booking cap counts live bookings (BOOKING_CAP=${CAP})`, () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false, env: { BOOKING_CAP: String(CAP) } });
    root = await bootstrapAgent(t);
  });
  afterEach(() => expectKeptCountsExact(t));
  afterAll(() => t.close());

  const createSeries = (agent: AgentWithToken, input: ReturnType<typeof dailySeriesFromYesterday>) =>
    t.gql(CreateBookingDocument, { input }, bearer(agent.token));

  const createSeriesOrFail = async (agent: AgentWithToken, input: ReturnType<typeof dailySeriesFromYesterday>) => {
    const result = await createSeries(agent, input);
    if (result.errors) throw new Error(`create series failed: ${JSON.stringify(result.errors)}`);
    return result.data!.createBooking;
  };

  const confirmedCount = async (agent: AgentWithToken) =>
    (await t.query<{ n: number }>("select count(*)::int as n from bookings where agent_id = $1 and status = 'confirmed'", [agent.id]))[0]!.n;

  describe('series whose first slot has ended', () => {
    it(`accepts the ${CAP}th daily series that started yesterday and refuses the ${CAP + 1}th with booking_cap_reached`, async () => {
      const agent = await createAgent(t, root);
      for (let hour = 0; hour < CAP - 1; hour++) await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, hour));
      // Just below the cap: the fifth is still accepted.
      expect((await createSeries(agent, dailySeriesFromYesterday(agent, CAP - 1))).errors).toBeUndefined();
      // At the cap: the sixth is refused over GraphQL, and a one-off over REST too.
      const sixth = await createSeries(agent, dailySeriesFromYesterday(agent, CAP));
      expect(sixth.errors?.[0]?.extensions).toEqual({ code: 'booking_cap_reached' });
      const oneOff = await postBooking(t, agent, { startsAt: '2030-07-01T20:00:00Z', endsAt: '2030-07-01T21:00:00Z' });
      expect(oneOff.statusCode).toBe(429);
      expect(oneOff.json()).toEqual({ error: 'booking_cap_reached', message: expect.any(String) });
      expect(await confirmedCount(agent)).toBe(CAP);
    });

    it('previews the cap the way create counts it', async () => {
      const agent = await createAgent(t, root);
      for (let hour = 0; hour < CAP; hour++) await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, hour));
      const preview = await t.gql(PreviewBookingDocument, { input: dailySeriesFromYesterday(agent, CAP) }, bearer(agent.token));
      expect(preview.data!.previewBooking.capReached).toBe(true);
    });

    it('counts a series once, however many of its slots lie ahead', async () => {
      const agent = await createAgent(t, root);
      await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, 0));
      for (let hour = 1; hour < CAP; hour++) {
        const { startsAt, endsAt } = dailySeriesFromYesterday(agent, hour);
        const tomorrow = (at: string) => new Date(Date.parse(at) + 2 * DAY).toISOString();
        await createBooking(t, agent, tomorrow(startsAt), tomorrow(endsAt));
      }
      expect((await postBooking(t, agent, { startsAt: '2030-07-01T20:00:00Z', endsAt: '2030-07-01T21:00:00Z' })).statusCode).toBe(429);
    });
  });

  describe('what no longer counts', () => {
    it('a series whose last slot has ended', async () => {
      const agent = await createAgent(t, root);
      clock.set('2030-06-01T00:00:00Z');
      try {
        // Three days each, from 2030-06-10: the last slots end on 2030-06-12, before NOW.
        for (let hour = 0; hour < CAP; hour++) {
          const start = new Date(Date.parse('2030-06-10T00:00:00Z') + hour * HOUR);
          await createSeriesOrFail(agent, {
            agentId: agent.id,
            startsAt: start.toISOString(),
            endsAt: new Date(start.getTime() + HOUR / 2).toISOString(),
            rrule: 'FREQ=DAILY;COUNT=3',
          });
        }
        clock.set('2030-06-12T00:10:00Z'); // the last slot of the first series has started, not ended
        expect((await postBooking(t, agent, { startsAt: '2030-07-01T20:00:00Z', endsAt: '2030-07-01T21:00:00Z' })).statusCode).toBe(429);
      } finally {
        clock.set(NOW);
      }
      for (let i = 0; i < CAP; i++) {
        const response = await postBooking(t, agent, { startsAt: `2030-07-0${i + 1}T20:00:00Z`, endsAt: `2030-07-0${i + 1}T21:00:00Z` });
        expect(response.statusCode).toBe(201);
      }
      expect((await postBooking(t, agent, { startsAt: '2030-07-09T20:00:00Z', endsAt: '2030-07-09T21:00:00Z' })).statusCode).toBe(429);
    });

    it('a cancelled series', async () => {
      const agent = await createAgent(t, root);
      const series = [];
      for (let hour = 0; hour < CAP; hour++) series.push(await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, hour)));
      expect((await createSeries(agent, dailySeriesFromYesterday(agent, CAP))).errors?.[0]?.extensions).toEqual({ code: 'booking_cap_reached' });
      const cancelled = await t.gql(CancelBookingDocument, { id: series[0]!.id }, bearer(agent.token));
      expect(cancelled.data!.cancelBooking.status).toBe('cancelled');
      expect((await createSeries(agent, dailySeriesFromYesterday(agent, CAP))).errors).toBeUndefined();
      expect((await createSeries(agent, dailySeriesFromYesterday(agent, CAP + 1))).errors?.[0]?.extensions).toEqual({ code: 'booking_cap_reached' });
    });

    it('a series whose remaining occurrences were all cancelled one by one', async () => {
      const agent = await createAgent(t, root);
      // Yesterday, today and tomorrow at 14:00; NOW is 12:00 today.
      const short = await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, 14, 'FREQ=DAILY;COUNT=3'));
      for (let hour = 0; hour < CAP - 1; hour++) await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, hour));
      expect((await postBooking(t, agent, { startsAt: '2030-07-01T20:00:00Z', endsAt: '2030-07-01T21:00:00Z' })).statusCode).toBe(429);
      for (const startsAt of ['2030-06-16T14:00:00.000Z', '2030-06-15T14:00:00.000Z']) {
        const result = await t.gql(CancelOccurrenceDocument, { bookingId: short.id, startsAt }, bearer(agent.token));
        expect(result.errors).toBeUndefined();
      }
      expect((await postBooking(t, agent, { startsAt: '2030-07-01T20:00:00Z', endsAt: '2030-07-01T21:00:00Z' })).statusCode).toBe(201);
    });
  });

  describe('open-ended series', () => {
    it('count for as long as the nightly extension carries their slots ahead', async () => {
      const jobs = await startTestApp({ clock, databaseUrl: t.databaseUrl });
      try {
        const agent = await createAgent(t, root);
        for (let hour = 0; hour < CAP; hour++) await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, hour, 'FREQ=WEEKLY'));
        const probe = { agentId: agent.id, startsAt: '2031-09-01T20:00:00Z', endsAt: '2031-09-01T21:00:00Z' };
        const capReached = async () => (await t.gql(PreviewBookingDocument, { input: probe }, bearer(agent.token))).data!.previewBooking.capReached;
        expect(await capReached()).toBe(true);

        // A year and a month on, the slots written at creation have all ended: the series are live only
        // once the extension has written their next occurrences.
        clock.set('2031-07-20T00:00:00Z');
        // The series that the extension reached last.
        const lastSlot = async () =>
          (
            await t.query<{ last: Date }>(
              `select min(last) as last from (select max(s.starts_at) as last from booking_slots s join bookings b on b.id = s.booking_id
                                                where b.agent_id = $1 group by b.id) series`,
              [agent.id],
            )
          )[0]!.last;
        const before = (await lastSlot()).getTime();
        expect(before).toBeLessThan(Date.parse('2031-07-20T00:00:00Z'));
        await t.query(`select graphile_worker.add_job('extend_booking_horizons')`);
        // The job queue picks the job up on its next poll; on a loaded machine that can take seconds.
        for (let i = 0; i < 900 && (await lastSlot()).getTime() <= Date.parse('2032-07-01T00:00:00Z'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        expect((await lastSlot()).getTime()).toBeGreaterThan(Date.parse('2032-07-01T00:00:00Z'));
        expect(await capReached()).toBe(true);
        expect((await postBooking(t, agent, probe)).statusCode).toBe(429);
      } finally {
        clock.set(NOW);
        await jobs.app.close();
        await jobs.orm.close(true);
      }
    }, 90_000);
  });

  describe('simultaneous creates', () => {
    it(`let exactly ${CAP} of 12 series win, and with two live ones already, exactly ${CAP - 2} of 12`, async () => {
      for (const alreadyLive of [0, 2]) {
        const agent = await createAgent(t, root);
        for (let hour = 0; hour < alreadyLive; hour++) await createSeriesOrFail(agent, dailySeriesFromYesterday(agent, hour));
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => createSeries(agent, dailySeriesFromYesterday(agent, alreadyLive + i))),
        );
        const winners = results.filter((result) => !result.errors);
        const refusals = results.filter((result) => result.errors?.[0]?.extensions?.code === 'booking_cap_reached');
        expect(winners).toHaveLength(CAP - alreadyLive);
        expect(refusals).toHaveLength(12 - (CAP - alreadyLive));
        expect(await confirmedCount(agent)).toBe(CAP);
      }
    });
  });
});

describe('accepting a proposal for one occurrence of a series', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
  });
  afterEach(() => expectKeptCountsExact(t));
  afterAll(() => t.close());

  const accept = (target: AgentWithToken, proposalId: string) =>
    t.rest({ method: 'PATCH', url: `/api/proposals/${proposalId}/accept`, headers: bearer(target.token) });

  const propose = async (proposer: AgentWithToken, target: AgentWithToken, startsAt: string, endsAt: string) => {
    const response = await t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(proposer.token), payload: { targetAgentId: target.id, startsAt, endsAt } });
    return response.json() as { id: string };
  };

  const weeklySeries = async (target: AgentWithToken) => {
    const result = await t.gql(
      CreateBookingDocument,
      { input: { agentId: target.id, startsAt: '2030-07-01T09:00:00Z', endsAt: '2030-07-01T10:00:00Z', rrule: 'FREQ=WEEKLY;COUNT=4' } },
      bearer(target.token),
    );
    return result.data!.createBooking;
  };

  const occurrenceStarts = async (agent: AgentWithToken, bookingId: string) =>
    (await t.gql(OccurrencesDocument, { bookingId, limit: 10 }, bearer(agent.token))).data!.occurrences.map((slot) => slot.startsAt);

  const bookingsOf = async (agent: AgentWithToken) =>
    (await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) })).json().items as {
      id: string;
      agentId: string;
      startsAt: string;
      endsAt: string;
      rrule: string | null;
      status: string;
    }[];

  it.each([
    ['the first occurrence (the series row’s own range)', '2030-07-01T09:00:00.000Z', '2030-07-01T10:00:00.000Z'],
    ['a later occurrence', '2030-07-15T09:00:00.000Z', '2030-07-15T10:00:00.000Z'],
  ])('moves %s only: the target keeps the series without it, the proposer gets a single booking', async (_label, startsAt, endsAt) => {
    const proposer = await createAgent(t, root);
    const target = await createAgent(t, root);
    const series = await weeklySeries(target);
    const proposal = await propose(proposer, target, startsAt, endsAt);

    const response = await accept(target, proposal.id);
    expect(response.statusCode).toBe(200);
    expect(response.json().status).toBe('accepted');

    const [kept] = await bookingsOf(target);
    expect(kept).toMatchObject({ id: series.id, agentId: target.id, rrule: 'FREQ=WEEKLY;COUNT=4', status: 'confirmed' });
    const remaining = ['2030-07-01T09:00:00.000Z', '2030-07-08T09:00:00.000Z', '2030-07-15T09:00:00.000Z', '2030-07-22T09:00:00.000Z'].filter(
      (start) => start !== startsAt,
    );
    expect(await occurrenceStarts(target, series.id)).toEqual(remaining);
    expect(await t.query('select exdates from bookings where id = $1', [series.id])).toEqual([{ exdates: [startsAt] }]);
    expect((await t.query<{ starts_at: Date }>('select starts_at from booking_slots where booking_id = $1 order by starts_at', [series.id])).map((row) => row.starts_at.toISOString())).toEqual(remaining);

    const given = await bookingsOf(proposer);
    expect(given).toEqual([expect.objectContaining({ agentId: proposer.id, startsAt, endsAt, rrule: null, status: 'confirmed' })]);
    expect(given[0]!.id).not.toBe(series.id);
    expect(await t.query('select booking_id from proposals where id = $1', [proposal.id])).toEqual([{ booking_id: given[0]!.id }]);
    const events = await t.query<{ agent_id: string; type: string; booking_id: string }>(
      'select agent_id, type, booking_id from booking_events where agent_id in ($1, $2) order by id',
      [proposer.id, target.id],
    );
    expect(events).toEqual([
      { agent_id: target.id, type: 'booking.created', booking_id: series.id },
      { agent_id: proposer.id, type: 'booking.created', booking_id: given[0]!.id },
      { agent_id: target.id, type: 'booking.transferred', booking_id: given[0]!.id },
    ]);
    // The target may book the freed time again; the proposer holds it.
    expect((await postBooking(t, target, { startsAt, endsAt })).statusCode).toBe(201);
    expect((await postBooking(t, proposer, { startsAt, endsAt })).statusCode).toBe(409);
  });

  it('leaves the series whole when the proposer is busy then (slot_taken, still pending)', async () => {
    const proposer = await createAgent(t, root);
    const target = await createAgent(t, root);
    const series = await weeklySeries(target);
    await createBooking(t, proposer, '2030-07-08T09:30:00Z', '2030-07-08T10:30:00Z');
    const proposal = await propose(proposer, target, '2030-07-08T09:00:00Z', '2030-07-08T10:00:00Z');
    const response = await accept(target, proposal.id);
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toBe('slot_taken');
    expect(await occurrenceStarts(target, series.id)).toHaveLength(4);
    expect(await t.query('select exdates from bookings where id = $1', [series.id])).toEqual([{ exdates: [] }]);
    expect(await t.query('select status from proposals where id = $1', [proposal.id])).toEqual([{ status: 'pending' }]);
  });

  it('still moves a single booking of exactly that range as a whole', async () => {
    const proposer = await createAgent(t, root);
    const target = await createAgent(t, root);
    const single = await createBooking(t, target, '2030-08-01T09:00:00Z', '2030-08-01T10:00:00Z');
    const proposal = await propose(proposer, target, '2030-08-01T09:00:00Z', '2030-08-01T10:00:00Z');
    expect((await accept(target, proposal.id)).statusCode).toBe(200);
    expect((await bookingsOf(proposer)).map((booking) => booking.id)).toEqual([single.id]);
    expect(await bookingsOf(target)).toEqual([]);
  });
});
