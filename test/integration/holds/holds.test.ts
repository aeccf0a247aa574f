import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HOLD_LIMITS } from '../../../src/modules/holds/index.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { ConfirmHoldDocument, CreateHoldDocument, FreeBusyDocument, PreviewBookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2031-03-01T08:00:00.000Z';
const SLOT = { startsAt: '2031-03-10T10:00:00.000Z', endsAt: '2031-03-10T10:30:00.000Z' };

describe('holds', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  const hold = (caller: AgentWithToken, body: Record<string, unknown>) => t.rest({ method: 'POST', url: '/api/holds', headers: bearer(caller.token), payload: { ...SLOT, ...body } });
  const confirm = (caller: AgentWithToken, id: string) => t.rest({ method: 'PATCH', url: `/api/holds/${id}/confirm`, headers: bearer(caller.token) });
  const release = (caller: AgentWithToken, id: string) => t.rest({ method: 'DELETE', url: `/api/holds/${id}`, headers: bearer(caller.token) });
  const bookingsOf = async (agent: AgentWithToken) =>
    (await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) })).json().items as { id: string; status: string }[];
  const events = (agentId: string) => t.query<{ type: string; booking_id: string }>('select type, booking_id from booking_events where agent_id = $1 order by id', [agentId]);

  it('holds a slot that blocks like a booking, is not a booking until confirmed, and confirms into bookings with the same ids, once', async () => {
    const agent = await createAgent(t, root);
    const created = await hold(agent, {});
    expect(created.statusCode).toBe(201);
    const held = created.json();
    expect(held).toEqual({
      id: expect.any(String),
      holderAgentId: agent.id,
      ...SLOT,
      expiresAt: new Date(new Date(NOW).getTime() + HOLD_LIMITS.ttlDefaultSeconds * 1000).toISOString(),
      createdAt: NOW,
      status: 'held',
      calendars: [{ agentId: agent.id, bookingId: expect.any(String) }],
    });
    expect(await bookingsOf(agent)).toEqual([]);
    expect((await t.rest({ method: 'GET', url: '/api/holds', headers: bearer(agent.token) })).json().items).toEqual([held]);
    const taken = await postBooking(t, agent, SLOT);
    expect(taken.json().error).toBe('slot_taken');
    const check = await t.rest({ method: 'GET', url: `/api/availability/check?startsAt=${SLOT.startsAt}&endsAt=${SLOT.endsAt}`, headers: bearer(agent.token) });
    expect(check.json().reasons).toEqual([{ code: 'slot_taken', startsAt: SLOT.startsAt, holdId: held.id, heldByCaller: true, message: expect.stringContaining('confirm the hold') }]);

    const confirmed = await confirm(agent, held.id);
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json().hold).toMatchObject({ id: held.id, status: 'confirmed', calendars: held.calendars });
    expect(confirmed.json().bookings).toEqual([expect.objectContaining({ id: held.calendars[0].bookingId, status: 'confirmed', agentId: agent.id, ...SLOT })]);
    expect((await bookingsOf(agent)).map((booking) => booking.id)).toEqual([held.calendars[0].bookingId]);
    // Idempotent: the same answer, no second event.
    const again = await confirm(agent, held.id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(confirmed.json());
    expect(await events(agent.id)).toEqual([{ type: 'booking.created', booking_id: held.calendars[0].bookingId }]);
    expect((await release(agent, held.id)).statusCode).toBe(409);
  });

  it('never lets an expired hold block, nor become a booking, without waiting for a sweeper', async () => {
    const agent = await createAgent(t, root);
    const held = (await hold(agent, { ttlSeconds: HOLD_LIMITS.ttlMinSeconds })).json();
    clock.set(new Date(new Date(NOW).getTime() + HOLD_LIMITS.ttlMinSeconds * 1000));
    try {
      // Expired: availability and the slot check see it free at once; a booking takes the time (purging the hold).
      const check = await t.rest({ method: 'GET', url: `/api/availability/check?startsAt=${SLOT.startsAt}&endsAt=${SLOT.endsAt}`, headers: bearer(agent.token) });
      expect(check.json().available).toBe(true);
      expect((await confirm(agent, held.id)).json()).toEqual({ error: 'hold_expired', message: expect.stringContaining('expired') });
      expect((await postBooking(t, agent, SLOT)).statusCode).toBe(201);
      expect((await confirm(agent, held.id)).json().error).toBe('hold_expired');
      const read = (await t.rest({ method: 'GET', url: `/api/holds/${held.id}`, headers: bearer(agent.token) })).json();
      expect(read).toMatchObject({ status: 'expired', calendars: [{ agentId: agent.id, bookingId: null }] });
      expect(await t.query('select 1 from bookings where hold_id = $1', [held.id])).toEqual([]);
    } finally {
      clock.set(NOW);
    }
  });

  it('shows a live hold as busy in freeBusy and as a clash in previewBooking, and an expired one as free in both', async () => {
    const agent = await createAgent(t, root);
    const booked = { startsAt: '2031-03-10T12:00:00.000Z', endsAt: '2031-03-10T12:30:00.000Z' };
    expect((await postBooking(t, agent, booked)).statusCode).toBe(201);
    expect((await hold(agent, { ttlSeconds: HOLD_LIMITS.ttlMinSeconds })).statusCode).toBe(201);
    const window = { from: '2031-03-10T00:00:00.000Z', to: '2031-03-11T00:00:00.000Z' };
    const seen = async () => ({
      busy: (await t.gql(FreeBusyDocument, window, bearer(agent.token))).data!.freeBusy.busy,
      clashes: (await t.gql(PreviewBookingDocument, { input: { agentId: agent.id, ...SLOT } }, bearer(agent.token))).data!.previewBooking.clashingOccurrences,
    });
    expect(await seen()).toEqual({ busy: [SLOT, booked], clashes: [SLOT] });
    clock.set(new Date(new Date(NOW).getTime() + HOLD_LIMITS.ttlMinSeconds * 1000));
    try {
      expect(await seen()).toEqual({ busy: [booked], clashes: [] });
    } finally {
      clock.set(NOW);
    }
  });

  it('lets a proposal’s slot move onto a calendar whose hold there expired', async () => {
    const [proposer, target] = [await createAgent(t, root), await createAgent(t, root)];
    const slot = { startsAt: '2031-03-12T10:00:00.000Z', endsAt: '2031-03-12T10:30:00.000Z' };
    expect((await postBooking(t, target, slot)).statusCode).toBe(201);
    const proposal = await t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(proposer.token), payload: { targetAgentId: target.id, ...slot } });
    expect(proposal.statusCode).toBe(201);
    const held = (await hold(proposer, { ...slot, ttlSeconds: HOLD_LIMITS.ttlMinSeconds })).json();
    clock.set(new Date(new Date(NOW).getTime() + HOLD_LIMITS.ttlMinSeconds * 1000));
    try {
      // The target's booking moves whole to the proposer; the expired hold in its way goes (it was slot_taken).
      const accepted = await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.json().id}/accept`, headers: bearer(target.token) });
      expect(accepted.statusCode).toBe(200);
      expect((await bookingsOf(proposer)).map((booking) => booking.status)).toEqual(['confirmed']);
      expect(await t.query('select 1 from bookings where hold_id = $1', [held.id])).toEqual([]);
    } finally {
      clock.set(NOW);
    }
  });

  it('shows held time as busy to others and as free to its holder in availability', async () => {
    const parent = await createAgent(t, root);
    const child = await createAgent(t, parent);
    const slot = { startsAt: '2031-03-13T10:00:00.000Z', endsAt: '2031-03-13T10:30:00.000Z' };
    expect((await hold(parent, { ...slot, agentIds: [child.id] })).statusCode).toBe(201);
    const starts = async (caller: AgentWithToken, agents: string[]) =>
      (
        await t.rest({
          method: 'GET',
          url: `/api/availability?agents=${agents.join(',')}&duration=30&granularity=30&from=2031-03-13T09:30:00Z&to=2031-03-13T11:00:00Z`,
          headers: bearer(caller.token),
        })
      ).json().items.map((item: { startsAt: string }) => item.startsAt);
    // The holder sees the time as its own to confirm; the calendar's owner sees it taken.
    expect(await starts(parent, [child.id])).toEqual(['2031-03-13T09:30:00.000Z', slot.startsAt, '2031-03-13T10:30:00.000Z']);
    expect(await starts(child, [])).toEqual(['2031-03-13T09:30:00.000Z', '2031-03-13T10:30:00.000Z']);
  });

  it('releases at once; a released hold does not confirm, and releasing twice is fine', async () => {
    const agent = await createAgent(t, root);
    const held = (await hold(agent, { startsAt: '2031-03-11T10:00:00Z', endsAt: '2031-03-11T11:00:00Z' })).json();
    expect((await release(agent, held.id)).statusCode).toBe(204);
    expect((await release(agent, held.id)).statusCode).toBe(204);
    expect((await confirm(agent, held.id)).json().error).toBe('hold_released');
    expect((await postBooking(t, agent, { startsAt: '2031-03-11T10:00:00Z', endsAt: '2031-03-11T11:00:00Z' })).statusCode).toBe(201);
  });

  it('spans several calendars all or none, for the caller and its children only, under each calendar’s rules', async () => {
    const parent = await createAgent(t, root);
    const [a, b] = [await createAgent(t, parent), await createAgent(t, parent)];
    const stranger = await createAgent(t, root);
    expect((await hold(parent, { agentIds: [a.id, stranger.id] })).statusCode).toBe(403);
    // b is busy: nothing is held anywhere.
    expect((await postBooking(t, b, SLOT)).statusCode).toBe(201);
    const refused = await hold(parent, { agentIds: [parent.id, a.id, b.id] });
    expect(refused.json().error).toBe('slot_taken');
    expect(await t.query('select 1 from holds where holder_agent_id = $1', [parent.id])).toEqual([]);
    // a's rules bind its parent: outside a's hours.
    await t.rest({ method: 'PUT', url: `/api/agents/${a.id}/availability-rules`, headers: bearer(parent.token), payload: { timeZone: 'UTC', weeklyHours: [{ day: 'monday', start: '12:00', end: '13:00' }] } });
    expect((await hold(parent, { agentIds: [parent.id, a.id] })).json().error).toBe('outside_working_hours');
    const inHours = { startsAt: '2031-03-10T12:00:00Z', endsAt: '2031-03-10T12:30:00Z' };
    const held = (await hold(parent, { agentIds: [a.id, parent.id], ...inHours })).json();
    expect(held.calendars.map((calendar: { agentId: string }) => calendar.agentId)).toEqual([a.id, parent.id].sort());
    // Only the holder confirms; each calendar gets its booking and its event.
    expect((await confirm(a, held.id)).statusCode).toBe(403);
    const confirmed = (await confirm(parent, held.id)).json();
    expect(confirmed.bookings.map((booking: { agentId: string }) => booking.agentId)).toEqual([a.id, parent.id].sort());
    expect((await events(a.id)).map((event) => event.type)).toEqual(['booking.created']);
    expect((await events(parent.id)).map((event) => event.type)).toEqual(['booking.created']);
  });

  it('bounds the ttl, the calendars and the live holds of one holder, below and above', async () => {
    const agent = await createAgent(t, root);
    for (const ttlSeconds of [HOLD_LIMITS.ttlMinSeconds - 1, HOLD_LIMITS.ttlMaxSeconds + 1]) {
      const response = await hold(agent, { ttlSeconds });
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json().errors)).toEqual(['ttlSeconds']);
    }
    const children = await Promise.all(Array.from({ length: HOLD_LIMITS.maxCalendars }, () => createAgent(t, agent)));
    const ids = children.map((child) => child.id);
    expect((await hold(agent, { agentIds: [...ids, agent.id] })).statusCode).toBe(400);
    expect((await hold(agent, { agentIds: ids, ttlSeconds: HOLD_LIMITS.ttlMaxSeconds })).statusCode).toBe(201);
    for (let n = 1; n < HOLD_LIMITS.maxLiveHolds; n++) {
      const minute = new Date(Date.parse('2031-04-01T00:00:00Z') + n * 60_000);
      expect((await hold(agent, { startsAt: minute.toISOString(), endsAt: new Date(minute.getTime() + 60_000).toISOString() })).statusCode).toBe(201);
    }
    const over = await hold(agent, { startsAt: '2031-05-01T00:00:00Z', endsAt: '2031-05-01T00:01:00Z' });
    expect(over.json().error).toBe('limit_exceeded');
    expect((await t.rest({ method: 'GET', url: '/api/holds', headers: bearer(agent.token) })).json().items).toHaveLength(HOLD_LIMITS.maxLiveHolds);
  });

  it('holds and confirms through GraphQL and MCP as through REST', async () => {
    const agent = await createAgent(t, root);
    const created = await t.gql(CreateHoldDocument, { input: { startsAt: '2031-03-12T10:00:00Z', endsAt: '2031-03-12T10:30:00Z' } }, bearer(agent.token));
    const { id, calendars } = created.data!.createHold;
    const confirmed = await t.gql(ConfirmHoldDocument, { id }, bearer(agent.token));
    expect(confirmed.data!.confirmHold.hold.status).toBe('confirmed');
    // Held at version 1, confirmed at 2: the id stays.
    expect(confirmed.data!.confirmHold.bookings).toEqual([expect.objectContaining({ id: calendars[0]!.bookingId, status: 'confirmed', version: 2 })]);
    const client = await connectMcp(t, bearer(agent.token));
    try {
      const viaMcp = await callTool(client, 'hold_slot', { startsAt: '2031-03-13T10:00:00Z', endsAt: '2031-03-13T10:30:00Z' });
      expect(viaMcp.isError).toBe(false);
      const mcpHold = viaMcp.body as { id: string };
      expect((await callTool(client, 'list_holds', {})).body).toEqual({ items: [viaMcp.body] });
      const mcpConfirmed = await callTool(client, 'confirm_hold', { holdId: mcpHold.id });
      expect((mcpConfirmed.body as { hold: { status: string } }).hold.status).toBe('confirmed');
      expect((await callTool(client, 'confirm_hold', { holdId: '00000000-0000-4000-8000-000000000000' })).isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
