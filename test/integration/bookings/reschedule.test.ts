import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { subscribeToBookingEvents } from '../../factories/booking-events.js';
import { postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { CancelOccurrenceDocument, CreateBookingDocument, CreateGroupBookingDocument, RescheduleBookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2031-03-01T08:00:00.000Z';

describe('reschedule', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let url: string;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    url = `ws://127.0.0.1:${address.port}/graphql`;
  });
  afterAll(() => t.close());

  const move = (agent: AgentWithToken, id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.rest({ method: 'PATCH', url: `/api/bookings/${id}/reschedule`, headers: { ...bearer(agent.token), ...headers }, payload: body });
  const occurrences = async (agent: AgentWithToken, id: string) =>
    ((await t.rest({ method: 'GET', url: `/api/bookings/${id}/occurrences?limit=10`, headers: bearer(agent.token) })).json().items as { startsAt: string }[]).map(
      (item) => item.startsAt,
    );
  const series = async (agent: AgentWithToken, startsAt: string, endsAt: string, rrule: string) => {
    const created = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt, endsAt, rrule } }, bearer(agent.token));
    if (created.errors) throw new Error(JSON.stringify(created.errors));
    return created.data!.createBooking;
  };

  it('moves a booking keeping its id, raises its version, and tells subscribers and the log where it was', async () => {
    const agent = await createAgent(t, root);
    const created = await postBooking(t, agent, { startsAt: '2031-03-10T10:00:00Z', endsAt: '2031-03-10T11:00:00Z' });
    expect(created.headers.etag).toBe('"1"');
    const subscription = subscribeToBookingEvents(url, agent.token);
    await subscription.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Half an hour later: it overlaps its own old range, which is not in its way.
    const moved = await move(agent, created.json().id, { startsAt: '2031-03-10T10:30:00Z', endsAt: '2031-03-10T11:30:00Z' }, { 'if-match': '"1"' });
    expect(moved.statusCode).toBe(200);
    expect(moved.headers.etag).toBe('"2"');
    expect(moved.json()).toEqual({ ...created.json<Record<string, unknown>>(), startsAt: '2031-03-10T10:30:00.000Z', endsAt: '2031-03-10T11:30:00.000Z' });
    const [event] = await subscription.waitFor(1);
    await subscription.close();
    expect(event).toMatchObject({
      type: 'booking.rescheduled',
      booking: { id: created.json().id, startsAt: '2031-03-10T10:30:00.000Z', version: 2 },
      previous: { bookingId: created.json().id, startsAt: '2031-03-10T10:00:00.000Z', endsAt: '2031-03-10T11:00:00.000Z', version: 1 },
    });
    // The time it left is free; where it went is taken.
    expect((await postBooking(t, agent, { startsAt: '2031-03-10T10:00:00Z', endsAt: '2031-03-10T10:30:00Z' })).statusCode).toBe(201);
    expect((await postBooking(t, agent, { startsAt: '2031-03-10T11:00:00Z', endsAt: '2031-03-10T11:30:00Z' })).json().error).toBe('slot_taken');
  });

  it('moves only the version it was told (If-Match, expectedVersion), 412 version_mismatch otherwise, writing nothing', async () => {
    const agent = await createAgent(t, root);
    const id = (await postBooking(t, agent, { startsAt: '2031-03-11T10:00:00Z', endsAt: '2031-03-11T11:00:00Z' })).json().id;
    const stale = await move(agent, id, { startsAt: '2031-03-11T12:00:00Z', endsAt: '2031-03-11T13:00:00Z' }, { 'if-match': '"2"' });
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toEqual({ error: 'version_mismatch', message: expect.stringContaining('version 1') });
    expect((await move(agent, id, { startsAt: '2031-03-11T12:00:00Z', endsAt: '2031-03-11T13:00:00Z' }, { 'if-match': 'W/"1"' })).statusCode).toBe(400);
    const graphql = await t.gql(RescheduleBookingDocument, { input: { id, startsAt: '2031-03-11T12:00:00Z', endsAt: '2031-03-11T13:00:00Z', expectedVersion: 7 } }, bearer(agent.token));
    expect(graphql.errors?.[0]?.extensions?.code).toBe('version_mismatch');
    const client = await connectMcp(t, bearer(agent.token));
    try {
      const viaMcp = await callTool(client, 'reschedule_booking', { bookingId: id, startsAt: '2031-03-11T12:00:00Z', endsAt: '2031-03-11T13:00:00Z', expectedVersion: 1 });
      expect(viaMcp.body).toMatchObject({ id, startsAt: '2031-03-11T12:00:00.000Z', version: 2 });
      expect((await callTool(client, 'reschedule_booking', { bookingId: id, startsAt: '2031-03-11T14:00:00Z', endsAt: '2031-03-11T15:00:00Z', expectedVersion: 1 })).body).toMatchObject({
        error: 'version_mismatch',
      });
    } finally {
      await client.close();
    }
    expect(await t.query('select starts_at from bookings where id = $1', [id])).toEqual([{ starts_at: new Date('2031-03-11T12:00:00Z') }]);
    // A cancelled booking is not moved.
    await t.rest({ method: 'DELETE', url: `/api/bookings/${id}`, headers: bearer(agent.token) });
    expect((await move(agent, id, { startsAt: '2031-03-12T12:00:00Z', endsAt: '2031-03-12T13:00:00Z' })).json().error).toBe('conflict');
  });

  it('moves under every rule a create faces: buffers always, the hours when the agent enforces them', async () => {
    const agent = await createAgent(t, root);
    await t.rest({
      method: 'PUT',
      url: '/api/agents/me/availability-rules',
      headers: bearer(agent.token),
      payload: { timeZone: 'UTC', weeklyHours: [{ day: 'wednesday', start: '09:00', end: '17:00' }], bufferAfterMinutes: 30, enforceOnOwnBookings: true },
    });
    const first = (await postBooking(t, agent, { startsAt: '2031-03-12T09:00:00Z', endsAt: '2031-03-12T10:00:00Z' })).json();
    const second = (await postBooking(t, agent, { startsAt: '2031-03-12T12:00:00Z', endsAt: '2031-03-12T13:00:00Z' })).json();
    expect((await move(agent, second.id, { startsAt: '2031-03-12T10:00:00Z', endsAt: '2031-03-12T11:00:00Z' })).json().error).toBe('buffer_conflict');
    expect((await move(agent, second.id, { startsAt: '2031-03-12T16:30:00Z', endsAt: '2031-03-12T17:30:00Z' })).json().error).toBe('outside_working_hours');
    expect((await move(agent, second.id, { startsAt: '2031-03-12T10:30:00Z', endsAt: '2031-03-12T11:30:00Z' })).statusCode).toBe(200);
    expect(first.id).not.toBe(second.id);
  });

  it('moves a whole series with its removed occurrences, one occurrence out of it, or this and following', async () => {
    const agent = await createAgent(t, root);
    const weekly = await series(agent, '2031-03-03T10:00:00Z', '2031-03-03T11:00:00Z', 'FREQ=WEEKLY;COUNT=6');
    expect((await t.gql(CancelOccurrenceDocument, { bookingId: weekly.id, startsAt: '2031-03-17T10:00:00Z' }, bearer(agent.token))).errors).toBeUndefined();
    // The whole series an hour later: the removed occurrence moves with it.
    const whole = await move(agent, weekly.id, { startsAt: '2031-03-03T11:00:00Z', endsAt: '2031-03-03T12:00:00Z', scope: 'series' });
    expect(whole.json()).toMatchObject({ id: weekly.id, startsAt: '2031-03-03T11:00:00.000Z', rrule: 'FREQ=WEEKLY;COUNT=6' });
    expect(await occurrences(agent, weekly.id)).toEqual(['2031-03-03T11:00:00.000Z', '2031-03-10T11:00:00.000Z', '2031-03-24T11:00:00.000Z', '2031-03-31T11:00:00.000Z', '2031-04-07T11:00:00.000Z']);

    // One occurrence to another day: it becomes a booking of its own, the series keeps the rest.
    const one = await move(agent, weekly.id, { startsAt: '2031-03-11T15:00:00Z', endsAt: '2031-03-11T16:00:00Z', scope: 'occurrence', occurrenceStartsAt: '2031-03-10T11:00:00Z' });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ startsAt: '2031-03-11T15:00:00.000Z', rrule: null });
    expect(one.json().id).not.toBe(weekly.id);
    expect(await occurrences(agent, weekly.id)).toEqual(['2031-03-03T11:00:00.000Z', '2031-03-24T11:00:00.000Z', '2031-03-31T11:00:00.000Z', '2031-04-07T11:00:00.000Z']);
    const [event] = await t.query<{ booking: { id: string }; previous: unknown }>(`select booking, previous from booking_events where type = 'booking.rescheduled' and booking_id = $1`, [one.json().id]);
    // The series was at version 3: created, an occurrence removed, moved.
    expect(event!.previous).toEqual({ bookingId: weekly.id, startsAt: '2031-03-10T11:00:00.000Z', endsAt: '2031-03-10T12:00:00.000Z', version: 3 });

    // This and following, from the 31st, to 09:00: the series ends before it, a new one takes the rest of its COUNT.
    const following = await move(agent, weekly.id, { startsAt: '2031-03-31T09:00:00Z', endsAt: '2031-03-31T10:00:00Z', scope: 'following', occurrenceStartsAt: '2031-03-31T11:00:00Z' });
    expect(following.statusCode).toBe(200);
    expect(following.json()).toMatchObject({ startsAt: '2031-03-31T09:00:00.000Z', rrule: 'FREQ=WEEKLY;COUNT=2' });
    expect(await occurrences(agent, following.json().id)).toEqual(['2031-03-31T09:00:00.000Z', '2031-04-07T09:00:00.000Z']);
    expect(await occurrences(agent, weekly.id)).toEqual(['2031-03-03T11:00:00.000Z', '2031-03-24T11:00:00.000Z']);
    expect((await t.rest({ method: 'GET', url: `/api/bookings/${weekly.id}`, headers: bearer(agent.token) })).json().rrule).toBe('FREQ=WEEKLY;COUNT=4');
    // An occurrence it does not have is 404, and a single booking has no scope.
    expect((await move(agent, weekly.id, { startsAt: '2031-03-04T09:00:00Z', endsAt: '2031-03-04T10:00:00Z', scope: 'occurrence', occurrenceStartsAt: '2031-03-05T11:00:00Z' })).statusCode).toBe(404);
    expect((await move(agent, one.json().id, { startsAt: '2031-03-11T16:00:00Z', endsAt: '2031-03-11T17:00:00Z', scope: 'following', occurrenceStartsAt: '2031-03-11T15:00:00Z' })).statusCode).toBe(400);
  });

  it('raises the calendar feed’s SEQUENCE with the version (version less one: a new event’s is 0), so apps take the move', async () => {
    const agent = await createAgent(t, root);
    const id = (await postBooking(t, agent, { startsAt: '2031-03-13T10:00:00Z', endsAt: '2031-03-13T11:00:00Z' })).json().id;
    await move(agent, id, { startsAt: '2031-03-13T12:00:00Z', endsAt: '2031-03-13T13:00:00Z' });
    const feed = await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) });
    const body = (await t.rest({ method: 'GET', url: feed.json().path })).body;
    const event = new ICAL.Component(ICAL.parse(body)).getAllSubcomponents('vevent').find((vevent) => String(vevent.getFirstPropertyValue('uid')).startsWith(id))!;
    // Created at version 1 (SEQUENCE 0), moved at 2 (SEQUENCE 1).
    expect(event.getFirstPropertyValue('sequence')).toBe(1);
    expect(String(event.getFirstPropertyValue('dtstart'))).toBe('2031-03-13T12:00:00Z');
  });
});

describe('group bookings', () => {
  let t: TestApp;
  let root: AgentWithToken;

  beforeAll(async () => {
    t = await startTestApp({ clock: new TestClock(new Date(NOW)), jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const group = (caller: AgentWithToken, agentIds: string[], extra: Record<string, string> = {}) =>
    t.rest({ method: 'POST', url: '/api/bookings/group', headers: { ...bearer(caller.token), ...extra }, payload: { agentIds, startsAt: '2031-03-10T10:00:00Z', endsAt: '2031-03-10T11:00:00Z' } });

  it('books one meeting on the caller’s and its children’s calendars, one event each, all or none, replaying an Idempotency-Key', async () => {
    const parent = await createAgent(t, root);
    const children = [await createAgent(t, parent), await createAgent(t, parent)];
    const ids = [parent.id, ...children.map((child) => child.id)];
    const created = await group(parent, ids, { 'idempotency-key': 'meeting-1' });
    expect(created.statusCode).toBe(201);
    expect(created.json().items.map((item: { agentId: string }) => item.agentId)).toEqual([...ids].sort());
    expect((await group(parent, ids, { 'idempotency-key': 'meeting-1' })).json()).toEqual(created.json());
    const events = await t.query<{ agent_id: string }>(`select agent_id from booking_events where type = 'booking.created' and agent_id = any($1) order by agent_id`, [ids]);
    expect(events.map((event) => event.agent_id)).toEqual([...ids].sort());
    // A child may not book for its parent, nor anyone for a stranger.
    expect((await group(children[0]!, [children[0]!.id, parent.id])).statusCode).toBe(403);
    expect((await group(parent, [parent.id, root.id])).statusCode).toBe(403);
    // The slot is taken now: nothing more is written anywhere.
    const other = await createAgent(t, parent);
    expect((await group(parent, [other.id, children[0]!.id])).json().error).toBe('slot_taken');
    expect(await t.query('select 1 from bookings where agent_id = $1', [other.id])).toEqual([]);
    const viaGraphql = await t.gql(CreateGroupBookingDocument, { input: { agentIds: [other.id], startsAt: '2031-03-11T10:00:00Z', endsAt: '2031-03-11T11:00:00Z' } }, bearer(parent.token));
    expect(viaGraphql.data!.createGroupBooking).toEqual([expect.objectContaining({ agentId: other.id, status: 'confirmed', version: 1 })]);
  });

  it('bounds the calendars of one group, below and above', async () => {
    const parent = await createAgent(t, root);
    expect(Object.keys((await group(parent, [])).json().errors)).toEqual(['agentIds']);
    const children = await Promise.all(Array.from({ length: 20 }, () => createAgent(t, parent)));
    expect((await group(parent, children.map((child) => child.id))).statusCode).toBe(201);
    expect(Object.keys((await group(parent, [...children.map((child) => child.id), parent.id])).json().errors)).toEqual(['agentIds']);
  });
});
