import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FREE_FORM_OBJECT_LIMITS } from '../../../src/platform/free-form-object.js';
import { AGENT_LIMITS } from '../../../src/modules/agents/agent.service.js';
import { BOOKING_LIMITS, FREE_BUSY_LIMITS } from '../../../src/modules/bookings/booking.service.js';
import { PROPOSAL_LIMITS } from '../../../src/modules/proposals/proposal.service.js';
import { DELIVERY_LIST_LIMITS } from '../../../src/modules/webhooks/webhook.service.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { BookedSlotsDocument, ChildrenPageDocument, ChildrenTwoLevelsDocument, CreateAgentDocument, CreateBookingDocument, FreeBusyDocument, PreviewBookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A JSON object whose compact form is exactly `bytes` bytes: `{"k":"xxx…"}`. */
function objectOfBytes(bytes: number): Record<string, unknown> {
  const overhead = JSON.stringify({ k: '' }).length;
  const value = { k: 'x'.repeat(bytes - overhead) };
  expect(Buffer.byteLength(JSON.stringify(value))).toBe(bytes);
  return value;
}

/** `{"a":{"a":…{}}}` with `levels` objects in all. */
function objectOfDepth(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  return value;
}

/** `keys` keys in all, under one top-level key, so that only the nested count can exceed the bound. */
function objectOfKeys(keys: number): Record<string, unknown> {
  return { nested: Object.fromEntries(Array.from({ length: keys - 1 }, (_, index) => [`k${index}`, index])) };
}

const countAgents = async (t: TestApp) => (await t.query<{ n: number }>('select count(*)::int as n from agents'))[0]!.n;

/** Child agents written straight into the table: the bounds are about reading many, not about creating them. */
async function insertChildren(t: TestApp, parentId: string, count: number): Promise<void> {
  await t.query(
    `insert into agents (id, name, metadata, config, token_hash, parent_id, created_at)
     select gen_random_uuid(), 'bulk-' || i, '{}', '{}', encode(sha256(gen_random_uuid()::text::bytea), 'hex'), $1, now() + i * interval '1 ms'
       from generate_series(1, $2::int) as i`,
    [parentId, count],
  );
}

describe('free-form agent objects (metadata, config)', () => {
  let t: TestApp;
  let root: AgentWithToken;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const cases = [
    { bound: `${FREE_FORM_OBJECT_LIMITS.maxBytes} bytes`, fits: objectOfBytes(FREE_FORM_OBJECT_LIMITS.maxBytes), exceeds: objectOfBytes(FREE_FORM_OBJECT_LIMITS.maxBytes + 1) },
    { bound: `${FREE_FORM_OBJECT_LIMITS.maxDepth} levels`, fits: objectOfDepth(FREE_FORM_OBJECT_LIMITS.maxDepth), exceeds: objectOfDepth(FREE_FORM_OBJECT_LIMITS.maxDepth + 1) },
    { bound: `${FREE_FORM_OBJECT_LIMITS.maxKeys} keys`, fits: objectOfKeys(FREE_FORM_OBJECT_LIMITS.maxKeys), exceeds: objectOfKeys(FREE_FORM_OBJECT_LIMITS.maxKeys + 1) },
  ];

  for (const { bound, fits, exceeds } of cases) {
    for (const field of ['metadata', 'config'] as const) {
      it(`REST: stores ${field} at ${bound} and refuses one more with 400 naming ${field}, writing nothing`, async () => {
        const accepted = await t.rest({ method: 'POST', url: '/api/agents', headers: bearer(root.token), payload: { name: 'fits', [field]: fits } });
        expect(accepted.statusCode).toBe(201);
        const stored = await t.query<{ value: unknown }>(`select ${field} as value from agents where id = $1`, [accepted.json().id]);
        expect(stored[0]!.value).toEqual(fits);

        const before = await countAgents(t);
        const refused = await t.rest({ method: 'POST', url: '/api/agents', headers: bearer(root.token), payload: { name: 'too big', [field]: exceeds } });
        expect(refused.statusCode).toBe(400);
        expect(refused.json()).toEqual({ errors: { [field]: expect.any(String) } });
        expect(await countAgents(t)).toBe(before);
      });

      it(`GraphQL: stores ${field} at ${bound} and refuses one more with a validation error naming ${field}, writing nothing`, async () => {
        const accepted = await t.gql(CreateAgentDocument, { input: { name: 'fits', [field]: fits } }, bearer(root.token));
        expect(accepted.errors).toBeUndefined();
        expect(accepted.data!.createAgent.agent[field]).toEqual(fits);

        const before = await countAgents(t);
        const refused = await t.gql(CreateAgentDocument, { input: { name: 'too big', [field]: exceeds } }, bearer(root.token));
        expect(refused.data).toBeNull();
        expect(refused.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { [field]: expect.any(String) } });
        expect(await countAgents(t)).toBe(before);
      });
    }
  }

  it('REST: refuses more top-level keys than the bound in the schema itself, naming the field', async () => {
    const flat = Object.fromEntries(Array.from({ length: FREE_FORM_OBJECT_LIMITS.maxKeys + 1 }, (_, index) => [`k${index}`, index]));
    const refused = await t.rest({ method: 'POST', url: '/api/agents', headers: bearer(root.token), payload: { name: 'flat', metadata: flat } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ errors: { metadata: expect.any(String) } });
  });

  it('states the bounds in the OpenAPI document and the GraphQL schema', async () => {
    const document = (await t.rest({ method: 'GET', url: '/openapi.json' })).json();
    const metadata = JSON.stringify(document).includes(`at most ${FREE_FORM_OBJECT_LIMITS.maxBytes} bytes`);
    expect(metadata).toBe(true);
    const introspection = await t.rest({
      method: 'POST',
      url: '/graphql',
      payload: { query: '{ __type(name: "CreateAgentInput") { inputFields { name description } } }' },
    });
    const fields = introspection.json().data.__type.inputFields as { name: string; description: string | null }[];
    expect(fields.find((field) => field.name === 'metadata')?.description).toContain(`at most ${FREE_FORM_OBJECT_LIMITS.maxBytes} bytes`);
  });
});

describe('Agent.children pages', () => {
  let t: TestApp;
  let root: AgentWithToken;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  it(`answers up to ${AGENT_LIMITS.childrenMax} children per page, oldest first, and pages on with after`, async () => {
    const parent = await createAgent(t, root);
    await insertChildren(t, parent.id, AGENT_LIMITS.childrenMax + 5);
    const first = await t.gql(ChildrenPageDocument, { first: AGENT_LIMITS.childrenMax }, bearer(parent.token));
    expect(first.errors).toBeUndefined();
    const firstPage = first.data!.me.children;
    expect(firstPage.map((child) => child.name)).toEqual(Array.from({ length: AGENT_LIMITS.childrenMax }, (_, index) => `bulk-${index + 1}`));

    const rest = await t.gql(ChildrenPageDocument, { first: AGENT_LIMITS.childrenMax, after: firstPage.at(-1)!.id }, bearer(parent.token));
    expect(rest.data!.me.children.map((child) => child.name)).toEqual(['bulk-101', 'bulk-102', 'bulk-103', 'bulk-104', 'bulk-105']);

    const byDefault = await t.gql(ChildrenPageDocument, {}, bearer(parent.token));
    expect(byDefault.data!.me.children).toHaveLength(AGENT_LIMITS.childrenDefault);
  });

  it(`refuses first above ${AGENT_LIMITS.childrenMax} and an after that is not an id, naming the argument`, async () => {
    const parent = await createAgent(t, root);
    const tooMany = await t.gql(ChildrenPageDocument, { first: AGENT_LIMITS.childrenMax + 1 }, bearer(parent.token));
    expect(tooMany.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { first: `must be an integer from 1 to ${AGENT_LIMITS.childrenMax}` } });
    const badCursor = await t.gql(ChildrenPageDocument, { after: 'not-an-id' }, bearer(parent.token));
    expect(badCursor.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { after: expect.any(String) } });
  });

  it(`answers ${AGENT_LIMITS.childrenPerOperation} nested children in one operation and refuses one more with limit_exceeded`, async () => {
    const parent = await createAgent(t, root);
    await insertChildren(t, parent.id, 10);
    const children = await t.query<{ id: string }>('select id from agents where parent_id = $1 order by created_at, id', [parent.id]);
    // 10 children and 99 grandchildren under each: exactly the per-operation bound.
    for (const child of children) await insertChildren(t, child.id, (AGENT_LIMITS.childrenPerOperation - children.length) / children.length);

    const atBound = await t.gql(ChildrenTwoLevelsDocument, { first: AGENT_LIMITS.childrenMax }, bearer(parent.token));
    expect(atBound.errors).toBeUndefined();
    const answered = atBound.data!.me.children.reduce((sum, child) => sum + 1 + child.children.length, 0);
    expect(answered).toBe(AGENT_LIMITS.childrenPerOperation);

    // Written as literals, the same pages are refused before they run: graphql-armor's cost multiplies
    // a selection by a literal `first`; variables and defaults it cannot see are what the budget is for.
    const literal = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: bearer(parent.token),
      payload: { query: `{ me { children(first: ${AGENT_LIMITS.childrenMax}) { id children(first: ${AGENT_LIMITS.childrenMax}) { id } } } }` },
    });
    expect(literal.json().errors[0]).toMatchObject({ message: expect.stringContaining('Query Cost limit'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });

    await insertChildren(t, children[0]!.id, 1);
    const overBound = await t.gql(ChildrenTwoLevelsDocument, { first: AGENT_LIMITS.childrenMax }, bearer(parent.token));
    expect(overBound.data).toBeNull();
    expect(overBound.errors?.[0]?.extensions).toEqual({ code: 'limit_exceeded' });
  });
});

describe('freeBusy and bookedSlots', () => {
  let t: TestApp;
  let root: AgentWithToken;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  it(`answers a window of ${FREE_BUSY_LIMITS.maxWindowDays} days and refuses one a millisecond longer, naming to`, async () => {
    const agent = await createAgent(t, root);
    const from = new Date('2031-06-01T00:00:00Z');
    const to = new Date(from.getTime() + FREE_BUSY_LIMITS.maxWindowDays * DAY_MS);
    const accepted = await t.gql(FreeBusyDocument, { from: from.toISOString(), to: to.toISOString() }, bearer(agent.token));
    expect(accepted.errors).toBeUndefined();
    expect(accepted.data!.freeBusy).toEqual({ busy: [], free: [{ startsAt: from.toISOString(), endsAt: to.toISOString() }] });

    const refused = await t.gql(FreeBusyDocument, { from: from.toISOString(), to: new Date(to.getTime() + 1).toISOString() }, bearer(agent.token));
    expect(refused.data).toBeNull();
    expect(refused.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { to: `must be at most ${FREE_BUSY_LIMITS.maxWindowDays} days after from` } });

    const slotsAccepted = await t.gql(BookedSlotsDocument, { from: from.toISOString(), to: to.toISOString() }, bearer(agent.token));
    expect(slotsAccepted.data!.bookedSlots).toEqual([]);
    const slotsRefused = await t.gql(BookedSlotsDocument, { from: from.toISOString(), to: new Date(to.getTime() + 1).toISOString() }, bearer(agent.token));
    expect(slotsRefused.errors?.[0]?.extensions).toEqual(refused.errors?.[0]?.extensions);
  });

  it(`answers ${FREE_BUSY_LIMITS.maxBookedSlots} booked slots in the window and refuses one more, naming to`, async () => {
    expect(FREE_BUSY_LIMITS.maxBookedSlots).toBeLessThanOrEqual(BOOKING_LIMITS.maxOccurrences);
    const agent = await createAgent(t, root);
    const seriesStart = new Date('2031-01-01T00:00:00Z');
    // Hourly half-hour slots: the whole series lies inside one window.
    expect(FREE_BUSY_LIMITS.maxBookedSlots * 60 * 60 * 1000).toBeLessThan(FREE_BUSY_LIMITS.maxWindowDays * DAY_MS);
    const series = await t.gql(
      CreateBookingDocument,
      {
        input: {
          agentId: agent.id,
          startsAt: seriesStart.toISOString(),
          endsAt: new Date(seriesStart.getTime() + 30 * 60_000).toISOString(),
          rrule: `FREQ=HOURLY;COUNT=${FREE_BUSY_LIMITS.maxBookedSlots}`,
        },
      },
      bearer(agent.token),
    );
    expect(series.errors).toBeUndefined();
    const window = { from: seriesStart.toISOString(), to: new Date(seriesStart.getTime() + FREE_BUSY_LIMITS.maxWindowDays * DAY_MS).toISOString() };

    const atBound = await t.gql(FreeBusyDocument, window, bearer(agent.token));
    expect(atBound.errors).toBeUndefined();
    expect(atBound.data!.freeBusy.busy).toHaveLength(FREE_BUSY_LIMITS.maxBookedSlots);
    const slotsAtBound = await t.gql(BookedSlotsDocument, window, bearer(agent.token));
    expect(slotsAtBound.data!.bookedSlots).toHaveLength(FREE_BUSY_LIMITS.maxBookedSlots);

    const lastDay = new Date(new Date(window.to).getTime() - DAY_MS);
    const extra = await t.rest({
      method: 'POST',
      url: '/api/bookings',
      headers: bearer(agent.token),
      payload: { agentId: agent.id, startsAt: lastDay.toISOString(), endsAt: new Date(lastDay.getTime() + 60_000).toISOString() },
    });
    expect(extra.statusCode).toBe(201);
    const overBound = await t.gql(FreeBusyDocument, window, bearer(agent.token));
    expect(overBound.data).toBeNull();
    expect(overBound.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { to: expect.stringContaining(`more than ${FREE_BUSY_LIMITS.maxBookedSlots} booked slots`) } });
    const slotsOverBound = await t.gql(BookedSlotsDocument, window, bearer(agent.token));
    expect(slotsOverBound.errors?.[0]?.extensions).toEqual(overBound.errors?.[0]?.extensions);
  });
});

describe('previewBooking', () => {
  let t: TestApp;
  let root: AgentWithToken;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  it(`lists ${BOOKING_LIMITS.previewConflictsShown} conflicting bookings, earliest first, and says when there are more`, async () => {
    const shown = BOOKING_LIMITS.previewConflictsShown;
    const agent = await createAgent(t, root);
    const firstDay = Date.parse('2031-03-01T00:00:00Z');
    const bookOnDay = async (day: number) => {
      const startsAt = firstDay + day * DAY_MS + 10 * 60 * 60 * 1000;
      const created = await t.rest({
        method: 'POST',
        url: '/api/bookings',
        headers: bearer(agent.token),
        payload: { agentId: agent.id, startsAt: new Date(startsAt).toISOString(), endsAt: new Date(startsAt + 30 * 60_000).toISOString() },
      });
      expect(created.statusCode).toBe(201);
      return created.json<{ id: string }>().id;
    };
    const booked: string[] = [];
    for (let day = 0; day < shown; day++) booked.push(await bookOnDay(day));
    // 09:00–11:00 every day: each occurrence overlaps that day's 10:00 booking.
    const series = {
      agentId: agent.id,
      startsAt: new Date(firstDay + 9 * 60 * 60 * 1000).toISOString(),
      endsAt: new Date(firstDay + 11 * 60 * 60 * 1000).toISOString(),
      rrule: `FREQ=DAILY;COUNT=${shown + 1}`,
    };

    const atBound = (await t.gql(PreviewBookingDocument, { input: series }, bearer(agent.token))).data!.previewBooking;
    expect(atBound.conflicts.map((booking) => booking.id)).toEqual(booked);
    expect(atBound.moreConflicts).toBe(false);
    expect(atBound.clashingOccurrences).toHaveLength(shown);

    booked.push(await bookOnDay(shown));
    const overBound = (await t.gql(PreviewBookingDocument, { input: series }, bearer(agent.token))).data!.previewBooking;
    expect(overBound.conflicts.map((booking) => booking.id)).toEqual(booked.slice(0, shown));
    expect(overBound.moreConflicts).toBe(true);
    expect(overBound.clashingOccurrences).toHaveLength(shown + 1);
    expect(overBound.available).toBe(false);
  });
});

describe('page sizes of the other scheduling lists', () => {
  let t: TestApp;
  let agent: AgentWithToken;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    agent = await createAgent(t, await bootstrapAgent(t));
  });
  afterAll(() => t.close());

  const graphql = async (query: string) => (await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query } })).json();

  it(`GET /api/proposals takes limit up to ${PROPOSAL_LIMITS.listMax} and answers 400 naming limit above`, async () => {
    const accepted = await t.rest({ method: 'GET', url: `/api/proposals?limit=${PROPOSAL_LIMITS.listMax}`, headers: bearer(agent.token) });
    expect(accepted.statusCode).toBe(200);
    const refused = await t.rest({ method: 'GET', url: `/api/proposals?limit=${PROPOSAL_LIMITS.listMax + 1}`, headers: bearer(agent.token) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ errors: { limit: expect.any(String) } });
  });

  it.each([
    ['proposals', PROPOSAL_LIMITS.listMax],
    ['webhookDeliveries', DELIVERY_LIST_LIMITS.max],
  ])('%s takes first up to %i and refuses one more, naming first', async (field, max) => {
    expect((await graphql(`{ ${field}(first: ${max}) { id } }`)).errors).toBeUndefined();
    const refused = await graphql(`{ ${field}(first: ${max + 1}) { id } }`);
    expect(refused.errors[0].extensions).toEqual({ code: 'validation', errors: { first: `must be an integer from 1 to ${max}` } });
  });
});
