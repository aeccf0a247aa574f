import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * The day counts behind limits (agent_day_slots, kept by triggers; availability reads them instead of counting):
 * equal to the slots starting on each local day of the agent's zone whatever writers race, counted afresh when the
 * zone changes under racing creates, and read by availability with held slots counted only while their hold lives.
 */
const NOW = '2031-06-01T08:00:00.000Z';
const MINUTE = 60_000;

describe('day counts of agents with rules', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const setRules = (agent: AgentWithToken, rules: Record<string, unknown>) =>
    t.rest({ method: 'PUT', url: '/api/agents/me/availability-rules', headers: bearer(agent.token), payload: rules });
  const slotAt = (iso: string, minutes: number) => ({ startsAt: iso, endsAt: new Date(Date.parse(iso) + minutes * MINUTE).toISOString() });
  const statuses = (responses: { statusCode: number }[]) =>
    responses.reduce<Record<number, number>>((counts, response) => ({ ...counts, [response.statusCode]: (counts[response.statusCode] ?? 0) + 1 }), {});
  /** The kept counts next to the slots counted afresh in the agent's zone, by local date; only days with slots. */
  const countsOf = async (agentId: string) => {
    const kept = await t.query<{ on_date: string; booked: number; held: number }>(
      `select on_date::text, booked, held from agent_day_slots where agent_id = $1 and booked + held > 0 order by on_date`,
      [agentId],
    );
    const fresh = await t.query<{ on_date: string; booked: number; held: number }>(
      `select (s.starts_at at time zone r.time_zone)::date::text as on_date,
              (count(*) filter (where s.hold_id is null))::int as booked, (count(*) filter (where s.hold_id is not null))::int as held
         from booking_slots s join availability_rules r on r.agent_id = s.agent_id
        where s.agent_id = $1 group by 1 order by 1`,
      [agentId],
    );
    return { kept, fresh };
  };

  it('keeps each local day equal to its slots while creates, holds, confirms, releases, cancels and reschedules race', async () => {
    const parent = await createAgent(t, root);
    const agent = await createAgent(t, parent);
    expect((await setRules(agent, { timeZone: 'America/New_York', dailyLimit: 1000, bufferAfterMinutes: 5, enforceOnOwnBookings: true })).statusCode).toBe(200);
    // Slots every 20 minutes from 2031-06-10T02:00Z, 22:00 the day before in New York (UTC−4): the first ones start on
    // the local day before their UTC date.
    const at = (i: number) => new Date(Date.parse('2031-06-10T02:00:00Z') + i * 20 * MINUTE).toISOString();
    const existing = [];
    for (let i = 0; i < 10; i++) existing.push(await createBooking(t, agent, at(200 + i), slotAt(at(200 + i), 10).endsAt));

    // At once: 20 slots created twice each (one wins each), 10 holds by the parent, 5 cancels, 5 reschedules to other days.
    const creates = Array.from({ length: 40 }, (_, i) => postBooking(t, agent, slotAt(at(i % 20), 10)));
    const holds = Array.from({ length: 10 }, (_, i) =>
      t.rest({ method: 'POST', url: '/api/holds', headers: bearer(parent.token), payload: { agentIds: [agent.id], ...slotAt(at(40 + i), 10) } }),
    );
    const cancels = existing.slice(0, 5).map((booking) => t.rest({ method: 'DELETE', url: `/api/bookings/${booking.id}`, headers: bearer(agent.token) }));
    const moves = existing.slice(5).map((booking, i) =>
      t.rest({ method: 'PATCH', url: `/api/bookings/${booking.id}/reschedule`, headers: bearer(agent.token), payload: slotAt(at(60 + i), 10) }),
    );
    const [created, held, cancelled, moved] = await Promise.all([Promise.all(creates), Promise.all(holds), Promise.all(cancels), Promise.all(moves)]);
    expect(statuses(created)).toEqual({ 201: 20, 409: 20 });
    expect(statuses(held)).toEqual({ 201: 10 });
    expect(statuses(cancelled)).toEqual({ 204: 5 });
    expect(statuses(moved)).toEqual({ 200: 5 });

    // At once: half the holds confirmed, the other half released.
    const holdIds = held.map((response) => response.json().id as string);
    const settled = await Promise.all(
      holdIds.map((id, i) =>
        i % 2 === 0
          ? t.rest({ method: 'PATCH', url: `/api/holds/${id}/confirm`, headers: bearer(parent.token) })
          : t.rest({ method: 'DELETE', url: `/api/holds/${id}`, headers: bearer(parent.token) }),
      ),
    );
    expect(settled.every((response) => response.statusCode < 300)).toBe(true);

    const { kept, fresh } = await countsOf(agent.id);
    expect(kept).toEqual(fresh);
    expect(fresh.reduce((sum, day) => sum + day.booked, 0)).toBe(20 + 5 + 5);
    expect(fresh.reduce((sum, day) => sum + day.held, 0)).toBe(0);
    expect(fresh.map((day) => day.on_date)).toEqual(['2031-06-09', '2031-06-10']);
  });

  it('counts the days afresh in the new zone when the rules change zone while creates race', async () => {
    const agent = await createAgent(t, root);
    expect((await setRules(agent, { timeZone: 'Asia/Tokyo', dailyLimit: 1000, enforceOnOwnBookings: true })).statusCode).toBe(200);
    // 40 slots an hour apart from 2031-07-01T00:00Z: Tokyo (UTC+9) and Los Angeles (UTC−7) split them into other days.
    const slots = Array.from({ length: 40 }, (_, i) => slotAt(new Date(Date.parse('2031-07-01T00:00:00Z') + i * 60 * MINUTE).toISOString(), 30));
    const [responses, changed] = await Promise.all([
      Promise.all(slots.map((slot) => postBooking(t, agent, slot))),
      setRules(agent, { timeZone: 'America/Los_Angeles', dailyLimit: 1000, enforceOnOwnBookings: true }),
    ]);
    expect(statuses(responses)).toEqual({ 201: 40 });
    expect(changed.statusCode).toBe(200);
    const { kept, fresh } = await countsOf(agent.id);
    expect(fresh.reduce((sum, day) => sum + day.booked, 0)).toBe(40);
    expect(fresh.map((day) => day.on_date)).toEqual(['2031-06-30', '2031-07-01', '2031-07-02']);
    expect(kept).toEqual(fresh);
  });

  it('lists a day filled by bookings as full, and one filled with a hold only while the hold lives', async () => {
    const parent = await createAgent(t, root);
    const agent = await createAgent(t, parent);
    expect((await setRules(agent, { timeZone: 'UTC', dailyLimit: 2 })).statusCode).toBe(200);
    // 2031-06-20: two bookings (full). 2031-06-21: a booking and the parent's 10-minute hold (full until it expires).
    await createBooking(t, agent, '2031-06-20T09:00:00.000Z', '2031-06-20T09:30:00.000Z');
    await createBooking(t, agent, '2031-06-20T11:00:00.000Z', '2031-06-20T11:30:00.000Z');
    await createBooking(t, agent, '2031-06-21T09:00:00.000Z', '2031-06-21T09:30:00.000Z');
    const hold = await t.rest({
      method: 'POST',
      url: '/api/holds',
      headers: bearer(parent.token),
      payload: { agentIds: [agent.id], startsAt: '2031-06-21T11:00:00.000Z', endsAt: '2031-06-21T11:30:00.000Z', ttlSeconds: 600 },
    });
    expect(hold.statusCode).toBe(201);
    const days = async () => {
      const query = new URLSearchParams({ agents: agent.id, duration: '30', from: '2031-06-20T00:00:00.000Z', to: '2031-06-22T00:00:00.000Z', granularity: '60', limit: '100' });
      const response = await t.rest({ method: 'GET', url: `/api/availability?${query.toString()}`, headers: bearer(parent.token) });
      expect(response.statusCode).toBe(200);
      return new Set((response.json().items as { startsAt: string }[]).map((item) => item.startsAt.slice(0, 10)));
    };
    // The parent's own hold counts towards the agent's limit like any live slot (writers count it too).
    expect(await days()).toEqual(new Set());
    const kept = await t.query<{ on_date: string; booked: number; held: number }>(
      'select on_date::text, booked, held from agent_day_slots where agent_id = $1 order by on_date',
      [agent.id],
    );
    expect(kept).toEqual([
      { on_date: '2031-06-20', booked: 2, held: 0 },
      { on_date: '2031-06-21', booked: 1, held: 1 },
    ]);

    // Expired, not yet purged: still counted as held, no longer live, so 2031-06-21 has room again.
    clock.set(new Date(Date.parse(NOW) + 11 * MINUTE));
    expect(await days()).toEqual(new Set(['2031-06-21']));
  });
});
