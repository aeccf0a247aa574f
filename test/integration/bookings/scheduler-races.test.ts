import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Issue 27's races: every request fired at once, winners counted, and what the database holds counted again. Each
 * invariant is held by PostgreSQL (the agents' row locks in id order, the exclusion constraint over the blocked
 * ranges, the limits counted under the lock), so no interleaving may break it.
 */
const NOW = '2031-03-01T08:00:00.000Z';

describe('scheduler races', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const hold = (caller: AgentWithToken, agentIds: string[], slot: { startsAt: string; endsAt: string }, ttlSeconds?: number) =>
    t.rest({ method: 'POST', url: '/api/holds', headers: bearer(caller.token), payload: { agentIds, ...slot, ...(ttlSeconds ? { ttlSeconds } : {}) } });
  const confirm = (caller: AgentWithToken, id: string) => t.rest({ method: 'PATCH', url: `/api/holds/${id}/confirm`, headers: bearer(caller.token) });
  const group = (caller: AgentWithToken, agentIds: string[], slot: { startsAt: string; endsAt: string }) =>
    t.rest({ method: 'POST', url: '/api/bookings/group', headers: bearer(caller.token), payload: { agentIds, ...slot } });
  const reschedule = (caller: AgentWithToken, id: string, slot: { startsAt: string; endsAt: string }) =>
    t.rest({ method: 'PATCH', url: `/api/bookings/${id}/reschedule`, headers: bearer(caller.token), payload: slot });
  /** What blocks the agent's calendar over the slot, read from the table: live slots of bookings and of live holds (with the hold a booking came from). */
  const blocking = (agentId: string, slot: { startsAt: string; endsAt: string }) =>
    t.query<{ booking_id: string; hold_id: string | null; status: string }>(
      `select s.booking_id, b.hold_id, b.status from booking_slots s join bookings b on b.id = s.booking_id
        where s.agent_id = $1 and tstzrange(s.blocked_from, s.blocked_until, '[)') && tstzrange($2::timestamptz, $3::timestamptz, '[)')
          and slot_is_live(s.hold_id, $4::timestamptz)`,
      [agentId, slot.startsAt, slot.endsAt, clock.now()],
    );
  const statuses = (responses: { statusCode: number }[]) =>
    responses.reduce<Record<number, number>>((counts, response) => ({ ...counts, [response.statusCode]: (counts[response.statusCode] ?? 0) + 1 }), {});

  it('lets exactly one of 200 simultaneous holds and creates of one slot win', async () => {
    const parent = await createAgent(t, root);
    const child = await createAgent(t, parent);
    const slot = { startsAt: '2031-03-10T10:00:00.000Z', endsAt: '2031-03-10T10:30:00.000Z' };
    // Interleaved: 100 holds by the parent on the child's calendar, 100 creates by the child.
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? hold(parent, [child.id], slot) : postBooking(t, child, slot))),
    );
    const won = responses.filter((response) => response.statusCode === 201);
    expect(won).toHaveLength(1);
    expect(statuses(responses)).toEqual({ 201: 1, 409: 199 });
    expect(new Set(responses.filter((response) => response.statusCode === 409).map((response) => response.json().error))).toEqual(new Set(['slot_taken']));
    expect(await blocking(child.id, slot)).toHaveLength(1);
  });

  it('never lets a hold expiring while 50 confirms and creates race end as two bookings', async () => {
    const parent = await createAgent(t, root);
    const child = await createAgent(t, parent);
    const outcomes = { confirmed: 0, created: 0 };
    for (let round = 0; round < 6; round++) {
      const slot = { startsAt: `2031-03-1${round}T10:00:00.000Z`, endsAt: `2031-03-1${round}T10:30:00.000Z` };
      const start = clock.now().getTime();
      const held = await hold(parent, [child.id], slot, 10);
      expect(held.statusCode).toBe(201);
      const holdId = held.json().id as string;
      // The clock reaches the expiry while the requests are under way: after the first 0, 2, 4, 8, 16 or 32 were
      // sent, each round's first request a confirm or a create in turn.
      const crossAt = [0, 2, 4, 8, 16, 32][round]!;
      const isConfirm = (i: number) => i % 2 === round % 2;
      const pending = [];
      for (let i = 0; i < 50; i++) {
        if (i === crossAt) clock.set(new Date(start + 10_000));
        pending.push(isConfirm(i) ? confirm(parent, holdId) : postBooking(t, child, slot));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const responses = await Promise.all(pending);
      const confirmsWon = responses.filter((response, i) => isConfirm(i) && response.statusCode === 200);
      const createsWon = responses.filter((response, i) => !isConfirm(i) && response.statusCode === 201);
      // Never both; and exactly one booking blocks the slot, whichever won.
      expect(confirmsWon.length > 0 && createsWon.length > 0).toBe(false);
      expect(createsWon.length).toBeLessThanOrEqual(1);
      const live = await blocking(child.id, slot);
      expect(live).toHaveLength(1);
      expect(live[0]!.status).toBe('confirmed');
      if (confirmsWon.length) {
        // A confirm is idempotent: every one that answered 200 answered the same booking, the one the hold held.
        expect(new Set(confirmsWon.map((response) => response.json().bookings[0].id))).toEqual(new Set([live[0]!.booking_id]));
        expect(live[0]!.hold_id).toBe(holdId);
        outcomes.confirmed++;
      } else {
        expect(createsWon[0]!.json().id).toBe(live[0]!.booking_id);
        const refusals = responses.filter((_, i) => isConfirm(i)).map((response) => response.json().error);
        expect(new Set(refusals)).toEqual(new Set(['hold_expired']));
        outcomes.created++;
      }
      // A booking.created event for the winner only.
      const events = await t.query<{ booking_id: string }>(`select booking_id from booking_events where agent_id = $1 and type = 'booking.created' and booking_id = $2`, [
        child.id,
        live[0]!.booking_id,
      ]);
      expect(events).toHaveLength(1);
      clock.set(new Date(start + 60_000));
    }
    // The expiry falls before any request in the first round: a create must win it.
    expect(outcomes.created).toBeGreaterThanOrEqual(1);
    console.log(`hold expiry race, 6 rounds: ${JSON.stringify(outcomes)}`);
  });

  it('lets a daily limit of 3 hold under 50 simultaneous creates', async () => {
    const agent = await createAgent(t, root);
    const rules = await t.rest({
      method: 'PUT',
      url: '/api/agents/me/availability-rules',
      headers: bearer(agent.token),
      payload: { timeZone: 'Europe/Berlin', dailyLimit: 3, enforceOnOwnBookings: true },
    });
    expect(rules.statusCode).toBe(200);
    // 50 ten-minute slots of one Berlin day (2031-03-12, UTC+1), none overlapping.
    const slots = Array.from({ length: 50 }, (_, i) => {
      const startsAt = new Date(Date.parse('2031-03-12T06:00:00Z') + i * 10 * 60_000);
      return { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 10 * 60_000).toISOString() };
    });
    const responses = await Promise.all(slots.map((slot) => postBooking(t, agent, slot)));
    expect(statuses(responses)).toEqual({ 201: 3, 409: 47 });
    expect(new Set(responses.filter((response) => response.statusCode === 409).map((response) => response.json().error))).toEqual(new Set(['daily_limit_reached']));
    const [{ count }] = (await t.query<{ count: string }>(`select count(*) from bookings where agent_id = $1 and status = 'confirmed'`, [agent.id])) as [{ count: string }];
    expect(Number(count)).toBe(3);
  });

  it('books a group of 5 agents all or none while single bookings race it on each calendar, every round', async () => {
    const parent = await createAgent(t, root);
    const children: AgentWithToken[] = [];
    for (let i = 0; i < 5; i++) children.push(await createAgent(t, parent));
    const ids = children.map((child) => child.id);
    let groupWon = 0;
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      const slot = { startsAt: `2031-04-${String(round + 1).padStart(2, '0')}T09:00:00.000Z`, endsAt: `2031-04-${String(round + 1).padStart(2, '0')}T09:30:00.000Z` };
      // The group request sent at a different place among the singles each round (first to last).
      const at = round % 6;
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i === at ? group(parent, ids, slot) : postBooking(t, children[i < at ? i : i - 1]!, slot))),
      );
      const g = responses[at];
      const singleResponses = responses.filter((_, i) => i !== at);
      const groupBookings = await t.query<{ agent_id: string }>(
        `select b.agent_id from bookings b where b.agent_id = any($1::uuid[]) and b.starts_at = $2::timestamptz and b.status = 'confirmed'`,
        [ids, slot.startsAt],
      );
      // Every calendar holds exactly one booking of the slot, whoever won it.
      expect(groupBookings.map((row) => row.agent_id).sort()).toEqual([...ids].sort());
      if (g!.statusCode === 201) {
        groupWon++;
        expect(g!.json().items).toHaveLength(5);
        expect(singleResponses.every((response) => response.statusCode === 409)).toBe(true);
      } else {
        expect(g!.statusCode).toBe(409);
        expect(g!.json().error).toBe('slot_taken');
        // None of the group was written: the calendars hold the singles, all of which won.
        expect(singleResponses.every((response) => response.statusCode === 201)).toBe(true);
      }
    }
    console.log(`group of 5 against 5 singles, ${rounds} rounds: the group won ${groupWon}`);
  });

  it('lets one of a reschedule and a create into the same range win', async () => {
    const agent = await createAgent(t, root);
    const wins = { reschedule: 0, create: 0 };
    for (let round = 0; round < 10; round++) {
      const day = `2031-05-${String(round + 1).padStart(2, '0')}`;
      const booking = await postBooking(t, agent, { startsAt: `${day}T08:00:00.000Z`, endsAt: `${day}T09:00:00.000Z` });
      expect(booking.statusCode).toBe(201);
      const target = { startsAt: `${day}T14:00:00.000Z`, endsAt: `${day}T15:00:00.000Z` };
      // Sent in either order, alternately.
      const [moved, created] =
        round % 2 === 0
          ? await Promise.all([reschedule(agent, booking.json().id, target), postBooking(t, agent, target)])
          : await Promise.all([postBooking(t, agent, target), reschedule(agent, booking.json().id, target)]).then(([c, m]) => [m, c]);
      const winners = [moved!.statusCode === 200, created!.statusCode === 201].filter(Boolean);
      expect(winners).toHaveLength(1);
      const loser = moved!.statusCode === 200 ? created! : moved!;
      expect(loser.statusCode).toBe(409);
      expect(loser.json().error).toBe('slot_taken');
      expect(await blocking(agent.id, target)).toHaveLength(1);
      if (moved!.statusCode === 200) wins.reschedule++;
      else wins.create++;
    }
    console.log(`reschedule against create, 10 rounds: ${JSON.stringify(wins)}`);
  });
});
