import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import pg from 'pg';
import { AVAILABILITY_LIMITS } from '../../../src/modules/availability/index.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import {
  AcceptProposalDocument,
  AvailabilityDocument,
  CancelOccurrenceDocument,
  CreateBookingDocument,
  FreeBusyVisibilitiesDocument,
  ProposeFirstAvailableDocument,
  SetFreeBusyVisibilityDocument,
  type AvailabilityQuery,
  type AvailabilityQueryVariables,
  type FreeBusyVisibility,
} from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2030-03-01T00:00:00.000Z';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

interface Interval {
  startsAt: Date;
  endsAt: Date;
}

/**
 * The oracle: every grid start (multiples of the granularity since the epoch) from `from` on whose
 * slot fits before `to` and overlaps none of the busy intervals, computed from the bookings the test made.
 */
function bruteForce(busy: readonly Interval[], from: string, to: string, durationMinutes: number, granularityMinutes: number): string[] {
  const step = granularityMinutes * MINUTE;
  const duration = durationMinutes * MINUTE;
  const slots: string[] = [];
  for (let start = Math.ceil(Date.parse(from) / step) * step; start + duration <= Date.parse(to); start += step) {
    const end = start + duration;
    if (!busy.some((interval) => interval.startsAt.getTime() < end && interval.endsAt.getTime() > start)) slots.push(new Date(start).toISOString());
  }
  return slots;
}

const interval = (startsAt: string | Date, minutes: number): Interval => ({
  startsAt: new Date(startsAt),
  endsAt: new Date(new Date(startsAt).getTime() + minutes * MINUTE),
});

describe('availability across agents', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const restAvailability = (caller: AgentWithToken, query: Record<string, string | number>) =>
    t.rest({
      method: 'GET',
      url: `/api/availability?${new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)])).toString()}`,
      headers: bearer(caller.token),
    });

  const setVisibility = async (agent: AgentWithToken, visibility: FreeBusyVisibility) => {
    const result = await t.gql(SetFreeBusyVisibilityDocument, { visibility }, bearer(agent.token));
    expect(result.errors).toBeUndefined();
    expect(result.data!.setFreeBusyVisibility).toEqual({ id: agent.id, freeBusyVisibility: visibility });
  };

  const createSeries = async (agent: AgentWithToken, startsAt: string, endsAt: string, rrule: string) => {
    const created = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt, endsAt, rrule } }, bearer(agent.token));
    expect(created.errors).toBeUndefined();
    return created.data!.createBooking;
  };

  /** Every page of the GraphQL connection, following endCursor. */
  const allGraphqlSlots = async (caller: AgentWithToken, variables: { agentIds: string[]; duration: number; from: string; to: string; granularity: number; first: number }) => {
    const starts: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 100; page++) {
      const result: Awaited<ReturnType<typeof t.gql<AvailabilityQuery, AvailabilityQueryVariables>>> = await t.gql(AvailabilityDocument, { ...variables, after }, bearer(caller.token));
      expect(result.errors).toBeUndefined();
      const { edges, pageInfo } = result.data!.availability;
      expect(edges.length).toBeLessThanOrEqual(variables.first);
      for (const edge of edges) {
        expect(new Date(edge.node.endsAt).getTime() - new Date(edge.node.startsAt).getTime()).toBe(variables.duration * MINUTE);
        starts.push(new Date(edge.node.startsAt).toISOString());
      }
      expect(pageInfo.endCursor).toBe(edges.at(-1)?.cursor ?? null);
      if (!pageInfo.hasNextPage) return starts;
      after = pageInfo.endCursor;
    }
    throw new Error('more than 100 pages');
  };

  /** Every page of the REST list, following nextCursor. */
  const allRestSlots = async (caller: AgentWithToken, query: Record<string, string | number>) => {
    const starts: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 100; page++) {
      const response = await restAvailability(caller, { ...query, ...(after ? { after } : {}) });
      expect(response.statusCode).toBe(200);
      const body = response.json<{ items: { startsAt: string; endsAt: string }[]; nextCursor: string | null }>();
      // Only free slots leave: no booking, id or anything else.
      expect(Object.keys(body).sort()).toEqual(['items', 'nextCursor']);
      for (const item of body.items) expect(Object.keys(item).sort()).toEqual(['endsAt', 'startsAt']);
      starts.push(...body.items.map((item) => item.startsAt));
      if (!body.nextCursor) return starts;
      after = body.nextCursor;
    }
    throw new Error('more than 100 pages');
  };

  describe('common free slots', () => {
    let caller: AgentWithToken;
    let parent: AgentWithToken;
    let child: AgentWithToken;
    const busy: Interval[] = [];
    // Europe/Berlin leaves winter time on Sunday 2030-03-31: 09:00 there is 08:00Z before, 07:00Z after.
    const FROM = '2030-03-18T00:07:00.000Z';
    const TO = '2030-04-15T00:00:00.000Z';

    beforeAll(async () => {
      parent = await createAgent(t, root, 'parent');
      caller = await createAgent(t, parent, 'caller');
      child = await createAgent(t, caller, 'child');

      // The caller: a weekly series at 09:00 Berlin time, with one occurrence removed (an EXDATE) after the change.
      const first = DateTime.fromObject({ year: 2030, month: 3, day: 4, hour: 9 }, { zone: 'Europe/Berlin' });
      const series = await createSeries(
        caller,
        first.toUTC().toISO()!,
        first.plus({ minutes: 60 }).toUTC().toISO()!,
        `DTSTART;TZID=Europe/Berlin:${first.toFormat("yyyyMMdd'T'HHmmss")}\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR`,
      );
      const removed = DateTime.fromObject({ year: 2030, month: 4, day: 3, hour: 9 }, { zone: 'Europe/Berlin' }).toUTC().toISO()!;
      expect((await t.gql(CancelOccurrenceDocument, { bookingId: series.id, startsAt: removed }, bearer(caller.token))).errors).toBeUndefined();
      for (let day = first; day.toUTC().toMillis() < Date.parse(TO); day = day.plus({ days: 1 })) {
        if ([1, 3, 5].includes(day.weekday) && day.toUTC().toISO() !== removed) busy.push(interval(day.toUTC().toISO()!, 60));
      }
      // A cancelled booking frees its time.
      const cancelled = await createBooking(t, caller, '2030-03-20T13:00:00Z', '2030-03-20T15:00:00Z');
      expect((await t.rest({ method: 'DELETE', url: `/api/bookings/${cancelled.id}`, headers: bearer(caller.token) })).statusCode).toBe(204);

      // The parent: single bookings spread over the day, two of them across the window's edges.
      for (const [startsAt, minutes] of [
        ['2030-03-17T23:00:00Z', 120],
        ['2030-04-14T23:30:00Z', 90],
      ] as const) {
        await createBooking(t, parent, startsAt, new Date(Date.parse(startsAt) + minutes * MINUTE).toISOString());
        busy.push(interval(startsAt, minutes));
      }
      for (let i = 0; i < 24; i++) {
        const startsAt = new Date(Date.parse('2030-03-18T02:10:00Z') + i * 27 * 60 * MINUTE).toISOString();
        await createBooking(t, parent, startsAt, new Date(Date.parse(startsAt) + 50 * MINUTE).toISOString());
        busy.push(interval(startsAt, 50));
      }

      // The child: a daily series in UTC with one occurrence cancelled.
      const daily = await createSeries(child, '2030-03-10T12:00:00Z', '2030-03-10T12:45:00Z', 'FREQ=DAILY;COUNT=40');
      expect((await t.gql(CancelOccurrenceDocument, { bookingId: daily.id, startsAt: '2030-03-25T12:00:00Z' }, bearer(child.token))).errors).toBeUndefined();
      for (let day = 0; day < 40; day++) {
        const startsAt = new Date(Date.parse('2030-03-10T12:00:00Z') + day * DAY).toISOString();
        if (startsAt !== '2030-03-25T12:00:00.000Z') busy.push(interval(startsAt, 45));
      }
    });

    it('lists every free grid start of the three calendars, as a brute force over their bookings finds them, through every page (GraphQL and REST)', async () => {
      const expected = bruteForce(busy, FROM, TO, 45, 15);
      expect(expected.length).toBeGreaterThan(1_000);
      // The series moved with Berlin's clock: busy 08:00Z before the change, 07:00Z after; the EXDATE and the cancellation are free.
      expect(expected).not.toContain('2030-03-29T07:30:00.000Z');
      expect(expected).not.toContain('2030-04-01T07:00:00.000Z');
      expect(expected).toContain('2030-04-03T07:00:00.000Z');
      expect(expected).toContain('2030-03-20T13:30:00.000Z');
      expect(expected).toContain('2030-03-25T12:00:00.000Z');
      // Slots start on the grid: the first is the first quarter hour at or after from.
      expect(expected[0]! >= '2030-03-18T00:15:00.000Z').toBe(true);

      const variables = { agentIds: [parent.id, child.id], duration: 45, from: FROM, to: TO, granularity: 15, first: AVAILABILITY_LIMITS.firstMax };
      expect(await allGraphqlSlots(caller, variables)).toEqual(expected);
      expect(await allRestSlots(caller, { agents: `${parent.id},${child.id}`, duration: 45, from: FROM, to: TO, granularity: 15, limit: 37 })).toEqual(expected.slice());
    });

    it('lists overlapping slots at every step when the duration is longer than the granularity, and only the caller’s calendar without others', async () => {
      const from = '2030-03-30T00:00:00.000Z';
      const to = '2030-04-06T00:00:00.000Z';
      const expected = bruteForce(busy, from, to, 90, 30);
      const starts = await allGraphqlSlots(caller, { agentIds: [child.id, parent.id, child.id.toUpperCase()], duration: 90, from, to, granularity: 30, first: 50 });
      expect(starts).toEqual(expected);
      expect(Date.parse(starts[1]!) - Date.parse(starts[0]!)).toBeLessThan(90 * MINUTE);

      const callerOnly = busy.filter((slot) => slot.endsAt.getTime() - slot.startsAt.getTime() === 60 * MINUTE);
      expect(await allRestSlots(caller, { duration: 60, from, to })).toEqual(bruteForce(callerOnly, from, to, 60, 15));
    });

    it('answers one availability request with one SQL statement, visibility included', async () => {
      const query = { agents: `${parent.id},${child.id}`, duration: 30, from: FROM, to: TO };
      expect((await restAvailability(caller, query)).statusCode).toBe(200); // the credential is now cached
      t.sql.reset();
      expect((await restAvailability(caller, query)).statusCode).toBe(200);
      expect(t.sql.statements).toHaveLength(1);
      expect(t.sql.statements[0]).toMatch(/booking_slots/);

      t.sql.reset();
      const result = await t.gql(AvailabilityDocument, { agentIds: [parent.id, child.id], duration: 30, from: FROM, to: TO }, bearer(caller.token));
      expect(result.data!.availability.edges).toHaveLength(50);
      expect(t.sql.statements).toHaveLength(1);
    });
  });

  describe('who may see whom', () => {
    let grandparent: AgentWithToken;
    let parent: AgentWithToken;
    let caller: AgentWithToken;
    let child: AgentWithToken;
    let sibling: AgentWithToken;
    let stranger: AgentWithToken;
    const window = { duration: 60, from: '2030-05-01T00:00:00Z', to: '2030-05-02T00:00:00Z' };

    beforeAll(async () => {
      grandparent = await createAgent(t, root, 'grandparent');
      parent = await createAgent(t, grandparent, 'parent');
      caller = await createAgent(t, parent, 'caller');
      child = await createAgent(t, caller, 'child');
      sibling = await createAgent(t, parent, 'sibling');
      stranger = await createAgent(t, root, 'stranger');
      // Busy time the refusals must not reveal.
      await createBooking(t, sibling, '2030-05-01T09:00:00Z', '2030-05-01T17:00:00Z');
    });

    const ask = (agents: string) => restAvailability(caller, { agents, ...window });

    it.each([
      ['itself, set to nobody', 200, 'nobody', 'caller'],
      ['its parent, set to family', 200, 'family', 'parent'],
      ['its parent, set to anyone', 200, 'anyone', 'parent'],
      ['its parent, set to nobody', 403, 'nobody', 'parent'],
      ['its child, set to family', 200, 'family', 'child'],
      ['its child, set to nobody', 403, 'nobody', 'child'],
      ['its child, set to anyone', 200, 'anyone', 'child'],
      ['a sibling, set to family', 403, 'family', 'sibling'],
      ['a sibling, set to anyone', 200, 'anyone', 'sibling'],
      ['a sibling, set to nobody', 403, 'nobody', 'sibling'],
      ['its grandparent, set to family', 403, 'family', 'grandparent'],
      ['an unrelated agent, set to family', 403, 'family', 'stranger'],
      ['an unrelated agent, set to anyone', 200, 'anyone', 'stranger'],
    ] as const)('asking about %s answers %i', async (_label, status, visibility, who) => {
      const agents = { caller, parent, child, sibling, grandparent, stranger };
      const target = agents[who];
      await setVisibility(target, visibility);
      const response = await ask(target.id);
      expect(response.statusCode).toBe(status);
      if (status === 403) {
        expect(response.json()).toEqual({ error: 'forbidden', message: 'not allowed to see the free/busy of an agent asked for: not shared with you, or no such agent' });
      } else {
        expect(response.json().items.length).toBeGreaterThan(0);
      }
      await setVisibility(target, 'family');
    });

    it('answers an unknown id exactly like an agent that does not share, and names no id', async () => {
      const unknown = '00000000-0000-4000-8000-00000000abcd';
      const refusedSibling = await ask(sibling.id);
      const refusedUnknown = await ask(unknown);
      const notAnId = await ask('not-an-agent-id');
      for (const refused of [refusedUnknown, notAnId]) {
        expect(refused.statusCode).toBe(403);
        expect(refused.body).toBe(refusedSibling.body);
      }
      expect(refusedSibling.body).not.toContain(sibling.id);

      const mixed = await ask(`${parent.id},${sibling.id},${child.id},${unknown}`);
      expect(mixed.statusCode).toBe(403);
      expect(mixed.json().message).toBe('not allowed to see the free/busy of 2 of the agents asked for: not shared with you, or no such agent');

      const graphql = await t.gql(AvailabilityDocument, { agentIds: [sibling.id], ...window }, bearer(caller.token));
      expect(graphql.errors?.[0]?.extensions).toEqual({ code: 'forbidden' });
      expect(graphql.data).toBeNull();
    });

    it('shows Agent.freeBusyVisibility to the agent and its parent only, and serves the setting over REST', async () => {
      await setVisibility(child, 'anyone');
      const seen = await t.gql(FreeBusyVisibilitiesDocument, {}, bearer(caller.token));
      expect(seen.data!.me).toMatchObject({ id: caller.id, freeBusyVisibility: 'family', parent: { id: parent.id, freeBusyVisibility: null } });
      expect(seen.data!.me.children).toEqual([{ id: child.id, freeBusyVisibility: 'anyone' }]);

      const put = await t.rest({ method: 'PUT', url: '/api/agents/me/free-busy-visibility', headers: bearer(caller.token), payload: { visibility: 'nobody' } });
      expect(put.statusCode).toBe(200);
      expect(put.json()).toEqual({ visibility: 'nobody' });
      // The caller's cached credential was dropped: its very next request reads the new setting.
      const get = await t.rest({ method: 'GET', url: '/api/agents/me/free-busy-visibility', headers: bearer(caller.token) });
      expect(get.json()).toEqual({ visibility: 'nobody' });
      expect((await t.gql(FreeBusyVisibilitiesDocument, {}, bearer(caller.token))).data!.me.freeBusyVisibility).toBe('nobody');
      expect((await restAvailability(parent, { agents: caller.id, ...window })).statusCode).toBe(403);

      const invalid = await t.rest({ method: 'PUT', url: '/api/agents/me/free-busy-visibility', headers: bearer(caller.token), payload: { visibility: 'friends' } });
      expect(invalid.statusCode).toBe(400);
      expect(Object.keys(invalid.json().errors)).toEqual(['visibility']);
      expect((await t.rest({ method: 'PUT', url: '/api/agents/me/free-busy-visibility', payload: { visibility: 'anyone' } })).statusCode).toBe(401);
      await setVisibility(caller, 'family');
      await setVisibility(child, 'family');
    });
  });

  describe('bounds', () => {
    let caller: AgentWithToken;
    let others: AgentWithToken[];
    const FROM = '2030-06-01T00:00:00.000Z';
    const plusMinutes = (minutes: number) => new Date(Date.parse(FROM) + minutes * MINUTE).toISOString();
    const L = AVAILABILITY_LIMITS;

    beforeAll(async () => {
      caller = await createAgent(t, root, 'bounds');
      others = [];
      for (let i = 0; i < L.maxOtherAgents; i++) others.push(await createAgent(t, caller));
    });

    const gql = (variables: Partial<{ agentIds: string[]; duration: number; from: string; to: string; granularity: number; first: number }>) =>
      t.gql(AvailabilityDocument, { agentIds: [], duration: 30, from: FROM, to: plusMinutes(24 * 60), ...variables }, bearer(caller.token));
    const fieldsOf = (result: Awaited<ReturnType<typeof gql>>) => {
      expect(result.errors?.[0]?.extensions?.code).toBe('validation');
      return Object.keys(result.errors![0]!.extensions!.errors as object);
    };

    it.each([
      ['agentIds', { agentIds: 'all' }, { agentIds: 'all+1' }],
      ['to', { to: plusMinutes(L.maxWindowDays * 24 * 60) }, { to: plusMinutes(L.maxWindowDays * 24 * 60 + 1) }],
      ['first', { first: L.firstMax }, { first: L.firstMax + 1 }],
      ['first', { first: 1 }, { first: 0 }],
      ['duration', { duration: L.durationMin }, { duration: L.durationMin - 1 }],
      ['duration', { duration: L.durationMax }, { duration: L.durationMax + 1 }],
      ['granularity', { granularity: L.granularityMin }, { granularity: L.granularityMin - 1 }],
      ['granularity', { granularity: L.granularityMax }, { granularity: L.granularityMax + 1 }],
      ['to', { to: plusMinutes(1) }, { to: FROM }],
      ['from', { from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' }, { from: '1999-12-31T23:59:00Z', to: '2000-01-02T00:00:00Z' }],
    ] as const)('%s: answers just inside the bound and refuses just outside it', async (field, inside, outside) => {
      const expand = (values: Record<string, unknown>) =>
        Object.fromEntries(
          Object.entries(values).map(([key, value]) => [
            key,
            value === 'all' ? others.map((agent) => agent.id) : value === 'all+1' ? [...others.map((agent) => agent.id), caller.id] : value,
          ]),
        );
      const ok = await gql(expand(inside));
      expect(ok.errors).toBeUndefined();
      expect(fieldsOf(await gql(expand(outside)))).toEqual([field]);
    });

    it('bounds the REST list: agents, limit, duration, granularity and unknown parameters', async () => {
      const base = { duration: 30, from: FROM, to: plusMinutes(24 * 60) };
      const agents = others.map((agent) => agent.id).join(',');
      const fiveDays = await restAvailability(caller, { ...base, to: plusMinutes(5 * 24 * 60), agents, limit: L.firstMax });
      expect(fiveDays.json().items).toHaveLength(L.firstMax);
      const cases: [Record<string, string | number>, string][] = [
        [{ agents: `${agents},${caller.id}` }, 'agents'],
        [{ limit: L.firstMax + 1 }, 'limit'],
        [{ duration: L.durationMax + 1 }, 'duration'],
        [{ granularity: L.granularityMin - 1 }, 'granularity'],
        [{ to: plusMinutes(L.maxWindowDays * 24 * 60 + 1) }, 'to'],
        [{ after: 'bm90IGEgY3Vyc29y' }, 'after'],
        [{ colour: 'blue' }, 'colour'],
      ];
      for (const [override, field] of cases) {
        const response = await restAvailability(caller, { ...base, ...override });
        expect([response.statusCode, Object.keys(response.json().errors ?? {})]).toEqual([400, [field]]);
      }
    });

    it(`refuses a window in which the agents asked hold more than ${L.maxBookedSlots} booked slots`, async () => {
      const crowded = await createAgent(t, caller, 'crowded');
      await createBooking(t, caller, FROM, plusMinutes(1));
      // Written in SQL: tens of thousands of 20-second slots of one booking every 30 seconds, each free of the others.
      const [booking] = await t.query<{ id: string }>(
        `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
         values (gen_random_uuid(), $1, $2, $2::timestamptz + interval '20 seconds', 'confirmed', null, '[]', now(), $2::timestamptz + interval '20 seconds') returning id`,
        [crowded.id, FROM],
      );
      const id = booking!.id;
      // With the caller's one slot, exactly the bound.
      await t.query(
        `insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
         select $1, $2, s, s + interval '20 seconds', s, s + interval '20 seconds'
           from generate_series(0, $4 - 1) i, lateral (select $3::timestamptz + i * interval '30 seconds' as s) start`,
        [id, crowded.id, FROM, L.maxBookedSlots - 1],
      );
      const window = { agentIds: [crowded.id], to: plusMinutes(L.maxWindowDays * 24 * 60) };
      expect((await gql(window)).errors).toBeUndefined();
      // One more, straddling the window's end.
      await t.query(
        `insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
         values ($1, $2, $3::timestamptz - interval '1 minute', $3::timestamptz + interval '1 minute', $3::timestamptz - interval '1 minute', $3::timestamptz + interval '1 minute')`,
        [
        id,
        crowded.id,
        window.to,
      ]);
      expect(fieldsOf(await gql(window))).toEqual(['to']);
    }, 60_000);
  });

  describe('proposeFirstAvailable', () => {
    let caller: AgentWithToken;
    let target: AgentWithToken;
    let day = 0;
    /** A fresh day per test, so tests never share a slot. */
    const nextDay = () => {
      const from = new Date(Date.UTC(2030, 8, 1) + day++ * DAY);
      return { from: from.toISOString(), to: new Date(from.getTime() + DAY).toISOString() };
    };
    const restPropose = (proposer: AgentWithToken, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      t.rest({ method: 'POST', url: '/api/proposals/first-available', headers: { ...bearer(proposer.token), ...headers }, payload: body });

    beforeAll(async () => {
      caller = await createAgent(t, root, 'proposer');
      target = await createAgent(t, caller, 'target');
    });

    it('opens a pending proposal for the earliest common free slot (REST and GraphQL)', async () => {
      const { from, to } = nextDay();
      // The caller is busy until 09:00, the target from 09:00 to 10:10: the first 30 minutes both have start at 10:15.
      await createBooking(t, caller, from, new Date(Date.parse(from) + 9 * 60 * MINUTE).toISOString());
      await createBooking(t, target, new Date(Date.parse(from) + 9 * 60 * MINUTE).toISOString(), new Date(Date.parse(from) + 610 * MINUTE).toISOString());
      const response = await restPropose(caller, { targetAgentId: target.id, duration: 30, from, to });
      expect(response.statusCode).toBe(201);
      const proposal = response.json();
      expect(proposal).toEqual({
        id: expect.any(String),
        proposerAgentId: caller.id,
        targetAgentId: target.id,
        startsAt: new Date(Date.parse(from) + 615 * MINUTE).toISOString(),
        endsAt: new Date(Date.parse(from) + 645 * MINUTE).toISOString(),
        status: 'pending',
        createdAt: NOW,
      });
      // The same slot is still free (a proposal holds nothing): GraphQL answers it too, on a 60-minute grid the next full hour.
      const graphql = await t.gql(ProposeFirstAvailableDocument, { input: { targetAgentId: target.id, duration: 30, from, to, granularity: 60 } }, bearer(caller.token));
      expect(graphql.errors).toBeUndefined();
      expect(graphql.data!.proposeFirstAvailable).toMatchObject({ startsAt: new Date(Date.parse(from) + 660 * MINUTE).toISOString(), status: 'pending' });
    });

    it('replays an Idempotency-Key and refuses it with another body', async () => {
      const window = nextDay();
      const body = { targetAgentId: target.id, duration: 45, ...window };
      const first = await restPropose(caller, body, { 'idempotency-key': 'first-available-1' });
      expect(first.statusCode).toBe(201);
      const again = await restPropose(caller, body, { 'idempotency-key': 'first-available-1' });
      expect(again.json()).toEqual(first.json());
      const other = await restPropose(caller, { ...body, duration: 60 }, { 'idempotency-key': 'first-available-1' });
      expect([other.statusCode, other.json().error]).toEqual([409, 'conflict']);
    });

    it('answers conflict when the window holds no common slot, forbidden for a target that does not share, 400 for oneself', async () => {
      const { from } = nextDay();
      const to = new Date(Date.parse(from) + 2 * 60 * MINUTE).toISOString();
      await createBooking(t, target, new Date(Date.parse(from) + 50 * MINUTE).toISOString(), new Date(Date.parse(from) + 70 * MINUTE).toISOString());
      const none = await restPropose(caller, { targetAgentId: target.id, duration: 60, from, to });
      expect(none.statusCode).toBe(409);
      expect(none.json()).toEqual({ error: 'conflict', message: expect.stringMatching(/^no free slot of 60 minutes common to both calendars/) });

      const outsider = await createAgent(t, root, 'outsider');
      const before = await t.query('select count(*)::int as n from proposals');
      const refused = await restPropose(outsider, { targetAgentId: target.id, duration: 30, ...nextDay() });
      expect([refused.statusCode, refused.json().error]).toEqual([403, 'forbidden']);
      expect(await t.query('select count(*)::int as n from proposals')).toEqual(before);
      const self = await restPropose(caller, { targetAgentId: caller.id, duration: 30, ...nextDay() });
      expect([self.statusCode, Object.keys(self.json().errors)]).toEqual([400, ['targetAgentId']]);
    });

    it('answers slot_taken when a booking takes the slot between the search and the write: the database decides', async () => {
      const { from, to } = nextDay();
      const client = new pg.Client({ connectionString: t.databaseUrl });
      await client.connect();
      try {
        // Another writer holds the target's calendar and books the slot the search is about to find, uncommitted.
        await client.query('begin');
        await client.query('select 1 from agents where id = $1 for no key update', [target.id]);
        const booking = (
          await client.query<{ id: string }>(
            `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
             values (gen_random_uuid(), $1, $2, $3, 'confirmed', null, '[]', now(), $3) returning id`,
            [target.id, from, new Date(Date.parse(from) + 30 * MINUTE).toISOString()],
          )
        ).rows[0]!;
        await client.query('insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until) values ($1, $2, $3, $4, $3, $4)', [
          booking.id,
          target.id,
          from,
          new Date(Date.parse(from) + 30 * MINUTE).toISOString(),
        ]);
        const pending = restPropose(caller, { targetAgentId: target.id, duration: 30, from, to });
        // Wait until the write waits for the target's row lock, then commit the booking.
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = (await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows as [{ n: number }];
          if (n > 0) break;
          if (waited > 10_000) throw new Error('the proposal never waited for the lock');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await client.query('commit');
        const response = await pending;
        expect(response.statusCode).toBe(409);
        expect(response.json().error).toBe('slot_taken');
      } finally {
        await client.end();
      }
      // Asked again, it finds the next slot.
      const retry = await restPropose(caller, { targetAgentId: target.id, duration: 30, from, to });
      expect(retry.statusCode).toBe(201);
      expect(retry.json().startsAt).toBe(new Date(Date.parse(from) + 30 * MINUTE).toISOString());
    });

    it('lets two simultaneous calls for one target both propose the same slot, as proposals hold no time; of the two accepts the database lets one through', async () => {
      const window = nextDay();
      const [a, b] = await Promise.all([
        restPropose(caller, { targetAgentId: target.id, duration: 30, ...window }),
        restPropose(caller, { targetAgentId: target.id, duration: 30, ...window }),
      ]);
      expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
      expect(a.json().startsAt).toBe(window.from);
      expect(b.json().startsAt).toBe(window.from);
      // Accepting both would book the proposer twice in one slot: the exclusion constraint admits one.
      const accepts = await Promise.all([a, b].map((response) => t.gql(AcceptProposalDocument, { id: response.json().id }, bearer(target.token))));
      const outcomes = accepts.map((result) => (result.errors ? result.errors[0]!.extensions!.code : result.data!.acceptProposal.status)).sort();
      expect(outcomes).toEqual(['accepted', 'slot_taken']);
      expect(await t.query('select count(*)::int as n from booking_slots where agent_id = $1 and starts_at = $2', [caller.id, window.from])).toEqual([{ n: 1 }]);
    });
  });
});
