import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RULE_LIMITS } from '../../../src/modules/availability-rules/index.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { ProposeFirstAvailableDocument, WorkingTimeDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/** Monday 2031-03-03 in Berlin (UTC+1 until 2031-03-30). */
const NOW = '2031-03-01T08:00:00.000Z';

describe('availability rules', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const putRules = (caller: AgentWithToken, body: Record<string, unknown>, who = 'me') =>
    t.rest({ method: 'PUT', url: `/api/agents/${who}/availability-rules`, headers: bearer(caller.token), payload: body });
  const getRules = (caller: AgentWithToken, who = 'me') => t.rest({ method: 'GET', url: `/api/agents/${who}/availability-rules`, headers: bearer(caller.token) });
  const check = (caller: AgentWithToken, agent: string, startsAt: string, endsAt: string) =>
    t.rest({ method: 'GET', url: `/api/availability/check?agent=${agent}&startsAt=${encodeURIComponent(startsAt)}&endsAt=${encodeURIComponent(endsAt)}`, headers: bearer(caller.token) });
  const book = (agent: AgentWithToken, startsAt: string, endsAt: string) => postBooking(t, agent, { startsAt, endsAt });
  const group = (caller: AgentWithToken, agentIds: string[], startsAt: string, endsAt: string) =>
    t.rest({ method: 'POST', url: '/api/bookings/group', headers: bearer(caller.token), payload: { agentIds, startsAt, endsAt } });

  const BERLIN_WEEKDAYS = {
    timeZone: 'Europe/Berlin',
    weeklyHours: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'].flatMap((day) => [
      { day, start: '09:00', end: '12:00' },
      { day, start: '13:00', end: '17:00' },
    ]),
  };

  describe('reading and writing them', () => {
    it('has none until set (404), then answers them as set, with their defaults', async () => {
      const agent = await createAgent(t, root);
      expect((await getRules(agent)).statusCode).toBe(404);
      const body = { ...BERLIN_WEEKDAYS, dateOverrides: [{ date: '2031-03-05', hours: [] }], bufferAfterMinutes: 15, dailyLimit: 3 };
      const put = await putRules(agent, body);
      expect(put.statusCode).toBe(200);
      expect(put.json()).toEqual({
        agentId: agent.id,
        ...body,
        bufferBeforeMinutes: 0,
        minimumNoticeMinutes: 0,
        maximumAdvanceDays: null,
        weeklyLimit: null,
        enforceOnOwnBookings: false,
        updatedAt: NOW,
      });
      expect((await getRules(agent)).json()).toEqual(put.json());
      expect((await t.rest({ method: 'DELETE', url: '/api/agents/me/availability-rules', headers: bearer(agent.token) })).statusCode).toBe(204);
      expect((await getRules(agent)).statusCode).toBe(404);
    });

    it('lets the agent and its parent read and change them, and no one else', async () => {
      const parent = await createAgent(t, root);
      const child = await createAgent(t, parent);
      const sibling = await createAgent(t, parent);
      expect((await putRules(parent, { timeZone: 'UTC' }, child.id)).statusCode).toBe(200);
      expect((await getRules(child)).json().timeZone).toBe('UTC');
      expect((await getRules(sibling, child.id)).statusCode).toBe(403);
      expect((await putRules(sibling, { timeZone: 'UTC' }, child.id)).statusCode).toBe(403);
      expect((await getRules(root, child.id)).statusCode).toBe(403);
    });

    it.each([
      [{ timeZone: 'Mars/Olympus' }, 'timeZone'],
      [{ timeZone: '+02:00' }, 'timeZone'],
      [{ timeZone: 'UTC', weeklyHours: [{ day: 'monday', start: '10:00', end: '09:00' }] }, 'weeklyHours[0].end'],
      [{ timeZone: 'UTC', weeklyHours: [{ day: 'monday', start: '24:00', end: '24:00' }] }, 'weeklyHours[0].start'],
      [{ timeZone: 'UTC', weeklyHours: [{ day: 'monday', start: '09:00', end: '12:00' }, { day: 'monday', start: '11:00', end: '13:00' }] }, 'weeklyHours[1].start'],
      [{ timeZone: 'UTC', weeklyHours: [{ day: 'monday', start: '09:00', end: '12:00' }, { day: 'monday', start: '12:00', end: '13:00' }] }, 'weeklyHours[1].start'],
      [{ timeZone: 'UTC', weeklyHours: [{ day: 'monday', start: '13:00', end: '14:00' }, { day: 'monday', start: '09:00', end: '10:00' }] }, 'weeklyHours[1].start'],
      [{ timeZone: 'UTC', dateOverrides: [{ date: '2031-02-30', hours: [] }] }, 'dateOverrides[0].date'],
      [{ timeZone: 'UTC', dateOverrides: [{ date: '2031-03-01', hours: [] }, { date: '2031-03-01', hours: [] }] }, 'dateOverrides[1].date'],
      [{ timeZone: 'UTC', bufferBeforeMinutes: RULE_LIMITS.bufferMaxMinutes + 1 }, 'bufferBeforeMinutes'],
      [{ timeZone: 'UTC', bufferAfterMinutes: -1 }, 'bufferAfterMinutes'],
      [{ timeZone: 'UTC', minimumNoticeMinutes: RULE_LIMITS.noticeMaxMinutes + 1 }, 'minimumNoticeMinutes'],
      [{ timeZone: 'UTC', maximumAdvanceDays: 0 }, 'maximumAdvanceDays'],
      [{ timeZone: 'UTC', maximumAdvanceDays: RULE_LIMITS.advanceMaxDays + 1 }, 'maximumAdvanceDays'],
      [{ timeZone: 'UTC', dailyLimit: 0 }, 'dailyLimit'],
      [{ timeZone: 'UTC', dailyLimit: RULE_LIMITS.dailyLimitMax + 1 }, 'dailyLimit'],
      [{ timeZone: 'UTC', weeklyLimit: RULE_LIMITS.weeklyLimitMax + 1 }, 'weeklyLimit'],
      [{ timeZone: 'UTC', enforce: true }, 'enforce'],
    ])('refuses %j with 400 naming %s, and writes nothing', async (body, field) => {
      const agent = await createAgent(t, root);
      const response = await putRules(agent, body);
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json().errors)).toContain(field);
      expect((await getRules(agent)).statusCode).toBe(404);
    });

    it('takes every bound at its edge', async () => {
      const agent = await createAgent(t, root);
      const perDay = Array.from({ length: RULE_LIMITS.intervalsPerDay }, (_, n) => ({ start: `${String(n * 2).padStart(2, '0')}:00`, end: `${String(n * 2).padStart(2, '0')}:30` }));
      const edge = {
        timeZone: 'America/Argentina/ComodRivadavia',
        weeklyHours: ['monday', 'sunday'].flatMap((day) => perDay.map((interval) => ({ day, ...interval }))),
        dateOverrides: Array.from({ length: RULE_LIMITS.dateOverrides }, (_, n) => ({ date: new Date(Date.UTC(2040, 0, 1 + n)).toISOString().slice(0, 10), hours: n ? [] : [{ start: '00:00', end: '24:00' }] })),
        bufferBeforeMinutes: RULE_LIMITS.bufferMaxMinutes,
        bufferAfterMinutes: 0,
        minimumNoticeMinutes: RULE_LIMITS.noticeMaxMinutes,
        maximumAdvanceDays: RULE_LIMITS.advanceMaxDays,
        dailyLimit: RULE_LIMITS.dailyLimitMax,
        weeklyLimit: RULE_LIMITS.weeklyLimitMax,
      };
      expect((await putRules(agent, edge)).statusCode).toBe(200);
      const tooMany = await putRules(agent, { ...edge, weeklyHours: [...edge.weeklyHours, { day: 'monday', start: '23:00', end: '24:00' }] });
      expect(tooMany.statusCode).toBe(400);
      expect(Object.keys(tooMany.json().errors)).toEqual(['weeklyHours']);
      const tooManyDates = await putRules(agent, { ...edge, dateOverrides: [...edge.dateOverrides, { date: '2099-01-01', hours: [] }] });
      expect(tooManyDates.statusCode).toBe(400);
      expect(Object.keys(tooManyDates.json().errors)).toEqual(['dateOverrides']);
      expect((await getRules(agent)).json().dateOverrides).toHaveLength(RULE_LIMITS.dateOverrides);
    });
  });

  describe('what they bind', () => {
    it('leave an agent’s own creates alone unless it enforces them; buffers bind everyone', async () => {
      const agent = await createAgent(t, root);
      await putRules(agent, { ...BERLIN_WEEKDAYS, bufferAfterMinutes: 30 });
      // Saturday night, outside the hours: its own create is fine.
      expect((await book(agent, '2031-03-08T22:00:00Z', '2031-03-08T23:00:00Z')).statusCode).toBe(201);
      // Back to back with it: only the buffer after the first one is in the way.
      const buffered = await book(agent, '2031-03-08T23:00:00Z', '2031-03-08T23:30:00Z');
      expect(buffered.statusCode).toBe(409);
      expect(buffered.json().error).toBe('buffer_conflict');
      expect((await book(agent, '2031-03-08T22:30:00Z', '2031-03-08T23:30:00Z')).json().error).toBe('slot_taken');
      expect((await book(agent, '2031-03-08T23:30:00Z', '2031-03-09T00:00:00Z')).statusCode).toBe(201);

      await putRules(agent, { ...BERLIN_WEEKDAYS, enforceOnOwnBookings: true });
      const outside = await book(agent, '2031-03-15T10:00:00Z', '2031-03-15T11:00:00Z');
      expect(outside.statusCode).toBe(409);
      expect(outside.json()).toEqual({ error: 'outside_working_hours', message: expect.stringContaining('outside the working hours') });
      // Monday 09:00–10:00 Berlin is 08:00–09:00 UTC.
      expect((await book(agent, '2031-03-10T08:00:00Z', '2031-03-10T09:00:00Z')).statusCode).toBe(201);
      // 11:30–12:30 Berlin runs into the lunch break.
      expect((await book(agent, '2031-03-10T10:30:00Z', '2031-03-10T11:30:00Z')).json().error).toBe('outside_working_hours');
    });

    it('refuse what others take outside the hours, too soon, too far ahead or past a limit, naming the rule; all or none', async () => {
      const parent = await createAgent(t, root);
      const child = await createAgent(t, parent);
      await putRules(parent, { ...BERLIN_WEEKDAYS, minimumNoticeMinutes: 60 * 60, maximumAdvanceDays: 30, dailyLimit: 2, weeklyLimit: 3 }, child.id);
      const refusal = async (startsAt: string, endsAt: string) => (await group(parent, [child.id, parent.id], startsAt, endsAt)).json();
      // Monday 2031-03-03 09:00 Berlin = 08:00 UTC: 48 hours after now, less than the 60 hours of notice.
      expect((await refusal('2031-03-03T08:00:00Z', '2031-03-03T08:30:00Z')).error).toBe('notice_too_short');
      expect((await refusal('2031-04-07T07:00:00Z', '2031-04-07T07:30:00Z')).error).toBe('too_far_ahead');
      expect((await refusal('2031-03-04T07:00:00Z', '2031-03-04T07:30:00Z')).error).toBe('outside_working_hours');
      for (const hour of ['08', '09']) expect((await group(parent, [child.id], `2031-03-04T${hour}:00:00Z`, `2031-03-04T${hour}:30:00Z`)).statusCode).toBe(201);
      const daily = await refusal('2031-03-04T12:00:00Z', '2031-03-04T12:30:00Z');
      expect(daily).toEqual({ error: 'daily_limit_reached', message: expect.stringContaining(`limit of 2 bookings on 2031-03-04 (local date) is reached on the calendar of agent ${child.id}`) });
      expect((await group(parent, [child.id], '2031-03-05T08:00:00Z', '2031-03-05T08:30:00Z')).statusCode).toBe(201);
      expect((await refusal('2031-03-06T08:00:00Z', '2031-03-06T08:30:00Z')).error).toBe('weekly_limit_reached');
      // The following Monday is another ISO week.
      expect((await group(parent, [child.id, parent.id], '2031-03-10T08:00:00Z', '2031-03-10T08:30:00Z')).statusCode).toBe(201);
      // Nothing of a refused group was written on the other calendar.
      const parentBookings = (await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(parent.token) })).json().items;
      expect(parentBookings.map((booking: { startsAt: string }) => booking.startsAt)).toEqual(['2031-03-10T08:00:00.000Z']);
    });

    it('bind proposals that target the agent: proposeFirstAvailable proposes working time, and an accept outside it is refused, the proposal left pending', async () => {
      const parent = await createAgent(t, root);
      const child = await createAgent(t, parent);
      await putRules(parent, BERLIN_WEEKDAYS, child.id);
      // Saturday 08:00Z: the first working time is Monday 09:00 Berlin (08:00Z), not the empty Saturday and Sunday.
      const proposed = await t.gql(
        ProposeFirstAvailableDocument,
        { input: { targetAgentId: child.id, duration: 30, from: '2031-03-01T08:00:00Z', to: '2031-03-08T08:00:00Z', granularity: 30 } },
        bearer(parent.token),
      );
      expect(proposed.errors).toBeUndefined();
      expect(proposed.data?.proposeFirstAvailable).toMatchObject({ startsAt: '2031-03-03T08:00:00.000Z', endsAt: '2031-03-03T08:30:00.000Z' });
      // A proposal for 07:00 Berlin (06:00Z) on a Tuesday: made, but the target's hours refuse it when it is accepted.
      const early = await t.rest({
        method: 'POST',
        url: '/api/proposals',
        headers: bearer(parent.token),
        payload: { targetAgentId: child.id, startsAt: '2031-03-04T06:00:00Z', endsAt: '2031-03-04T06:30:00Z' },
      });
      expect(early.statusCode).toBe(201);
      const accepted = await t.rest({ method: 'PATCH', url: `/api/proposals/${early.json().id}/accept`, headers: bearer(child.token) });
      expect(accepted.statusCode).toBe(409);
      expect(accepted.json().error).toBe('outside_working_hours');
      const listed = (await t.rest({ method: 'GET', url: '/api/proposals?role=outgoing', headers: bearer(parent.token) })).json().items;
      expect(listed.find((proposal: { id: string }) => proposal.id === early.json().id).status).toBe('pending');
      expect((await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(parent.token) })).json().items).toEqual([]);
    });

    it('read working hours on the wall clock across daylight-saving changes: a skipped start opens at the change, a repeated hour works twice', async () => {
      const parent = await createAgent(t, root);
      const [santiago, berlin] = [await createAgent(t, parent), await createAgent(t, parent)];
      // Santiago skips 00:00-01:00 on Sunday 2032-09-05 (the change at 04:00Z): 00:15-03:30 works from 01:00 local.
      await putRules(parent, { timeZone: 'America/Santiago', weeklyHours: [{ day: 'sunday', start: '00:15', end: '03:30' }] }, santiago.id);
      const codes = async (agent: string, startsAt: string, endsAt: string) =>
        (await check(parent, agent, startsAt, endsAt)).json().reasons.map((reason: { code: string }) => reason.code);
      expect(await codes(santiago.id, '2032-09-05T04:00:00Z', '2032-09-05T04:15:00Z')).toEqual([]);
      expect(await codes(santiago.id, '2032-09-05T06:15:00Z', '2032-09-05T06:30:00Z')).toEqual([]);
      expect(await codes(santiago.id, '2032-09-05T06:30:00Z', '2032-09-05T06:45:00Z')).toEqual(['outside_working_hours']);
      // Berlin repeats 02:00-03:00 on Sunday 2032-10-31 (CEST 00:00-01:00Z, then CET 01:00-02:00Z): 02:00-02:30 works on both passes.
      await putRules(parent, { timeZone: 'Europe/Berlin', weeklyHours: [{ day: 'sunday', start: '02:00', end: '02:30' }] }, berlin.id);
      expect(await codes(berlin.id, '2032-10-31T00:00:00Z', '2032-10-31T00:30:00Z')).toEqual([]);
      expect(await codes(berlin.id, '2032-10-31T01:00:00Z', '2032-10-31T01:30:00Z')).toEqual([]);
      expect(await codes(berlin.id, '2032-10-31T00:30:00Z', '2032-10-31T01:00:00Z')).toEqual(['outside_working_hours']);
    });

    it('answer their working time as instants for a calendar to shade: the hours and overrides on the zone’s clock, null without rules, a bounded window', async () => {
      const parent = await createAgent(t, root);
      const [child, stranger] = [await createAgent(t, parent), await createAgent(t, root)];
      const workingTime = (caller: AgentWithToken, from: string, to: string, agentId?: string) =>
        t.gql(WorkingTimeDocument, { agentId: agentId ?? null, from, to }, bearer(caller.token));
      expect((await workingTime(child, '2031-03-03T00:00:00Z', '2031-03-05T00:00:00Z')).data).toEqual({ workingTime: null });
      await putRules(parent, { ...BERLIN_WEEKDAYS, dateOverrides: [{ date: '2031-03-04', hours: [{ start: '10:00', end: '11:30' }] }] }, child.id);
      // Berlin is UTC+1 in March 2031: Monday's two intervals, then Tuesday's override alone.
      expect((await workingTime(parent, '2031-03-03T00:00:00Z', '2031-03-05T00:00:00Z', child.id)).data).toEqual({
        workingTime: [
          { startsAt: '2031-03-03T08:00:00.000Z', endsAt: '2031-03-03T11:00:00.000Z' },
          { startsAt: '2031-03-03T12:00:00.000Z', endsAt: '2031-03-03T16:00:00.000Z' },
          { startsAt: '2031-03-04T09:00:00.000Z', endsAt: '2031-03-04T10:30:00.000Z' },
        ],
      });
      // Clipped to the window; 31 days is the longest window, a minute more names `to`.
      expect((await workingTime(child, '2031-03-03T10:00:00Z', '2031-03-03T13:00:00Z')).data!.workingTime).toEqual([
        { startsAt: '2031-03-03T10:00:00.000Z', endsAt: '2031-03-03T11:00:00.000Z' },
        { startsAt: '2031-03-03T12:00:00.000Z', endsAt: '2031-03-03T13:00:00.000Z' },
      ]);
      const month = await workingTime(child, '2031-03-01T00:00:00Z', '2031-04-01T00:00:00Z');
      expect(month.data!.workingTime).toHaveLength(2 * 21 - 1);
      const tooLong = await workingTime(child, '2031-03-01T00:00:00Z', '2031-04-01T00:01:00Z');
      expect(tooLong.errors?.[0]?.extensions).toMatchObject({ code: 'validation', errors: { to: expect.stringContaining('31 days') } });
      const backwards = await workingTime(child, '2031-03-02T00:00:00Z', '2031-03-01T00:00:00Z');
      expect(backwards.errors?.[0]?.extensions).toMatchObject({ code: 'validation', errors: { to: 'must be after from' } });
      expect((await workingTime(stranger, '2031-03-03T00:00:00Z', '2031-03-04T00:00:00Z', child.id)).errors?.[0]?.extensions?.code).toBe('forbidden');
    });

    it('answer why not this slot with every reason and its cause, and forbidden to whom may not see the calendar', async () => {
      const parent = await createAgent(t, root);
      const child = await createAgent(t, parent);
      await putRules(parent, { ...BERLIN_WEEKDAYS, bufferBeforeMinutes: 15, minimumNoticeMinutes: 60, dailyLimit: 1 }, child.id);
      const booked = await book(child, '2031-03-04T08:00:00Z', '2031-03-04T08:30:00Z');
      expect(booked.statusCode).toBe(201);
      const free = await check(parent, child.id, '2031-03-05T08:00:00Z', '2031-03-05T08:30:00Z');
      expect(free.json()).toEqual({ agentId: child.id, startsAt: '2031-03-05T08:00:00.000Z', endsAt: '2031-03-05T08:30:00.000Z', available: true, reasons: [] });
      // Right after the booking (its buffer before is 15 minutes), a Tuesday at 11:45 Berlin that runs into lunch, the day's one booking taken.
      const answer = (await check(parent, child.id, '2031-03-04T08:30:00Z', '2031-03-04T11:30:00Z')).json();
      expect(answer.available).toBe(false);
      expect(answer.reasons.map((reason: { code: string }) => reason.code)).toEqual(['buffer_conflict', 'outside_working_hours', 'daily_limit_reached']);
      expect(answer.reasons[0]).toMatchObject({ bookingId: booked.json().id, message: expect.stringContaining(booked.json().id) });
      expect(answer.reasons[2]).toMatchObject({ limit: 1, date: '2031-03-04' });
      // Its own calendar, without enforceOnOwnBookings: the rules do not bind the child, the buffer does.
      expect((await check(child, child.id, '2031-03-04T08:30:00Z', '2031-03-04T11:30:00Z')).json().reasons.map((reason: { code: string }) => reason.code)).toEqual([
        'buffer_conflict',
      ]);
      const stranger = await createAgent(t, root);
      const hidden = await check(stranger, child.id, '2031-03-04T08:30:00Z', '2031-03-04T09:00:00Z');
      expect(hidden.statusCode).toBe(403);
      expect(hidden.body).not.toContain(booked.json().id);
      expect((await check(parent, child.id, '2031-03-04T09:00:00Z', '2031-03-04T08:00:00Z')).statusCode).toBe(400);
    });
  });
});
