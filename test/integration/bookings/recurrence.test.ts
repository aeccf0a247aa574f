import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import {
  BookedSlotsDocument,
  CancelOccurrenceDocument,
  CreateBookingDocument,
  FreeBusyDocument,
  OccurrencesDocument,
  PreviewBookingDocument,
} from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2030-01-01T00:00:00.000Z';

describe('recurring bookings', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const createSeries = (agent: AgentWithToken, startsAt: string, endsAt: string, rrule: string | null) =>
    t.gql(CreateBookingDocument, { input: { agentId: agent.id, startsAt, endsAt, rrule } }, bearer(agent.token));

  const occurrencesOf = async (agent: AgentWithToken, bookingId: string, limit = 50) => {
    const response = await t.rest({ method: 'GET', url: `/api/bookings/${bookingId}/occurrences?limit=${limit}`, headers: bearer(agent.token) });
    return { status: response.statusCode, body: response.json() };
  };

  it('stores a weekly rule with COUNT and expands exactly COUNT occurrences', async () => {
    const agent = await createAgent(t, root);
    const created = await createSeries(agent, '2030-01-07T09:00:00Z', '2030-01-07T10:00:00Z', 'FREQ=WEEKLY;COUNT=4');
    expect(created.errors).toBeUndefined();
    expect(created.data!.createBooking.rrule).toBe('FREQ=WEEKLY;COUNT=4');
    const { status, body } = await occurrencesOf(agent, created.data!.createBooking.id);
    expect(status).toBe(200);
    expect(body).toEqual({
      items: ['07', '14', '21', '28'].map((day) => ({ startsAt: `2030-01-${day}T09:00:00.000Z`, endsAt: `2030-01-${day}T10:00:00.000Z` })),
    });
    const slots = await t.query('select starts_at from booking_slots where booking_id = $1', [created.data!.createBooking.id]);
    expect(slots).toHaveLength(4);
  });

  it('stops a weekly rule with UNTIL', async () => {
    const agent = await createAgent(t, root);
    const created = await createSeries(agent, '2030-02-04T09:00:00Z', '2030-02-04T10:00:00Z', 'RRULE:FREQ=WEEKLY;UNTIL=20300218T090000Z');
    const { body } = await occurrencesOf(agent, created.data!.createBooking.id);
    expect(body.items.map((slot: { startsAt: string }) => slot.startsAt)).toEqual([
      '2030-02-04T09:00:00.000Z',
      '2030-02-11T09:00:00.000Z',
      '2030-02-18T09:00:00.000Z',
    ]);
  });

  it('lists only occurrences from now on, at most limit', async () => {
    const agent = await createAgent(t, root);
    clock.set('2029-12-01T00:00:00Z');
    const created = await createSeries(agent, '2029-12-02T09:00:00Z', '2029-12-02T09:30:00Z', 'FREQ=DAILY');
    clock.set('2029-12-10T12:00:00Z');
    try {
      const { body } = await occurrencesOf(agent, created.data!.createBooking.id, 3);
      expect(body.items.map((slot: { startsAt: string }) => slot.startsAt)).toEqual([
        '2029-12-11T09:00:00.000Z',
        '2029-12-12T09:00:00.000Z',
        '2029-12-13T09:00:00.000Z',
      ]);
    } finally {
      clock.set(NOW);
    }
  });

  it('refuses a series whose 40th occurrence hits an existing booking, writing nothing', async () => {
    const agent = await createAgent(t, root);
    // Weekly from Monday 2030-01-07: the 40th occurrence is 39 weeks later, 2030-10-07.
    const blocker = await createBooking(t, agent, '2030-10-07T09:30:00Z', '2030-10-07T10:30:00Z');
    const created = await createSeries(agent, '2030-01-07T09:00:00Z', '2030-01-07T10:00:00Z', 'FREQ=WEEKLY;COUNT=52');
    expect(created.errors?.[0]?.extensions).toEqual({ code: 'slot_taken' });
    const rows = await t.query<{ id: string }>('select id from bookings where agent_id = $1', [agent.id]);
    expect(rows).toEqual([{ id: blocker.id }]);

    const preview = await t.gql(
      PreviewBookingDocument,
      { input: { agentId: agent.id, startsAt: '2030-01-07T09:00:00Z', endsAt: '2030-01-07T10:00:00Z', rrule: 'FREQ=WEEKLY;COUNT=52' } },
      bearer(agent.token),
    );
    expect(preview.data!.previewBooking).toEqual({
      available: false,
      capReached: false,
      occurrenceCount: 52,
      conflicts: [{ id: blocker.id }],
      moreConflicts: false,
      clashingOccurrences: [{ startsAt: '2030-10-07T09:00:00.000Z', endsAt: '2030-10-07T10:00:00.000Z' }],
    });
    // The same series a week shorter avoids it.
    const shorter = await createSeries(agent, '2030-01-07T09:00:00Z', '2030-01-07T10:00:00Z', 'FREQ=WEEKLY;COUNT=39');
    expect(shorter.errors).toBeUndefined();
  });

  it('refuses a single booking that hits an occurrence of a series', async () => {
    const agent = await createAgent(t, root);
    await createSeries(agent, '2030-03-01T12:00:00Z', '2030-03-01T13:00:00Z', 'FREQ=MONTHLY');
    const clash = await postBooking(t, agent, { startsAt: '2030-11-01T12:30:00Z', endsAt: '2030-11-01T12:45:00Z' });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().error).toBe('slot_taken');
  });

  it('answers 400 with an rrule entry for a rule that does not parse', async () => {
    const agent = await createAgent(t, root);
    for (const rrule of ['FREQ=SOMETIMES', 'COUNT=3', 'FREQ=DAILY;INTERVAL=0', 'not a rule']) {
      const result = await createSeries(agent, '2030-04-01T09:00:00Z', '2030-04-01T10:00:00Z', rrule);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'validation', errors: { rrule: expect.stringMatching(/not a valid recurrence rule/) } });
    }
    expect(await t.query('select id from bookings where agent_id = $1', [agent.id])).toEqual([]);
  });

  it('refuses with an rrule entry, writing nothing, a rule calendar apps would expand differently from the gateway', async () => {
    const agent = await createAgent(t, root);
    const zoned = (rule: string) => `DTSTART;TZID=America/New_York:20300401T090000\nRRULE:${rule}`;
    for (const [rrule, reason] of [
      [zoned('FREQ=WEEKLY;UNTIL=20300501'), /UNTIL=20300501 is a date/],
      [zoned('FREQ=MONTHLY;BYDAY=MO;BYSETPOS=-1'), /BYSETPOS is read differently/],
      [zoned('FREQ=DAILY;BYHOUR=9,15'), /BYHOUR is read differently/],
      [zoned('FREQ=MONTHLY;BYMONTH=4,6'), /BYMONTH with FREQ=MONTHLY/],
      [zoned('FREQ=DAILY;BYMONTHDAY=-1'), /negative BYMONTHDAY with FREQ=DAILY/],
      [zoned('FREQ=YEARLY;BYMONTHDAY=1'), /needs BYMONTH/],
      [zoned('FREQ=WEEKLY;BYDAY=1MO'), /numbered BYDAY/],
      ['FREQ=HOURLY;INTERVAL=7;BYMONTH=4;COUNT=200', /its 200 occurrences within 366 days/],
    ] as const) {
      const result = await createSeries(agent, '2030-04-01T09:00:00-04:00', '2030-04-01T10:00:00-04:00', rrule);
      expect([rrule, result.errors?.[0]?.extensions]).toEqual([rrule, { code: 'validation', errors: { rrule: expect.stringMatching(reason) } }]);
    }
    // A yearly date some years lack: every twelve months is how to say it.
    const leap = await createSeries(agent, '2032-02-29T09:00:00Z', '2032-02-29T10:00:00Z', 'FREQ=YEARLY');
    expect(leap.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { rrule: expect.stringMatching(/FREQ=MONTHLY;INTERVAL=12;BYMONTHDAY=29/) } });
    expect(await t.query('select id from bookings where agent_id = $1', [agent.id])).toEqual([]);
    const monthly = await createSeries(agent, '2032-02-29T09:00:00Z', '2032-02-29T10:00:00Z', 'FREQ=MONTHLY;INTERVAL=12;BYMONTHDAY=29;COUNT=2');
    const { body } = await occurrencesOf(agent, monthly.data!.createBooking.id);
    expect(body.items.map((slot: { startsAt: string }) => slot.startsAt)).toEqual(['2032-02-29T09:00:00.000Z', '2036-02-29T09:00:00.000Z']);
  });

  it('stores a local UNTIL as the UTC instant it names on the zone’s wall clock, and compares a UTC UNTIL with instants', async () => {
    const agent = await createAgent(t, root);
    // 14:00 in New York is 18:00Z in May: UNTIL 14:00 local keeps the fourth Tuesday, 17:00Z does not.
    const local = await createSeries(
      agent,
      '2030-05-07T14:00:00-04:00',
      '2030-05-07T15:00:00-04:00',
      'DTSTART;TZID=America/New_York:20300507T140000\nRRULE:FREQ=WEEKLY;UNTIL=20300528T140000',
    );
    expect(local.data!.createBooking.rrule).toBe('DTSTART;TZID=America/New_York:20300507T140000\nRRULE:FREQ=WEEKLY;UNTIL=20300528T180000Z');
    expect((await occurrencesOf(agent, local.data!.createBooking.id)).body.items).toHaveLength(4);
    const utc = await createSeries(
      agent,
      '2030-06-04T14:00:00-04:00',
      '2030-06-04T15:00:00-04:00',
      'DTSTART;TZID=America/New_York:20300604T140000\nRRULE:FREQ=WEEKLY;UNTIL=20300625T170000Z',
    );
    expect(utc.data!.createBooking.rrule).toBe('DTSTART;TZID=America/New_York:20300604T140000\nRRULE:FREQ=WEEKLY;UNTIL=20300625T170000Z');
    expect((await occurrencesOf(agent, utc.data!.createBooking.id)).body.items).toHaveLength(3);
    expect(await t.query('select count(*)::int as slots from booking_slots where booking_id = $1', [utc.data!.createBooking.id])).toEqual([{ slots: 3 }]);
  });

  it('refuses a rule that would need more than 2000 occurrences within a year', async () => {
    const agent = await createAgent(t, root);
    const result = await createSeries(agent, '2030-04-01T09:00:00Z', '2030-04-01T09:10:00Z', 'FREQ=HOURLY;COUNT=5000');
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'validation', errors: { rrule: expect.stringMatching(/more than 2000/) } });
  });

  it('answers bad_rrule for a stored rule that no longer parses, and the booking stays', async () => {
    const agent = await createAgent(t, root);
    const created = await createSeries(agent, '2030-05-01T09:00:00Z', '2030-05-01T10:00:00Z', 'FREQ=DAILY;COUNT=3');
    const id = created.data!.createBooking.id;
    await t.query("update bookings set rrule = 'FREQ=FORTNIGHTLY' where id = $1", [id]);
    const { status, body } = await occurrencesOf(agent, id);
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'bad_rrule', message: expect.any(String) });
    expect(await t.query('select status from bookings where id = $1', [id])).toEqual([{ status: 'confirmed' }]);
  });

  it('gives a booking without a rule its own slot until it starts, then nothing', async () => {
    const agent = await createAgent(t, root);
    const single = await createBooking(t, agent, '2030-06-01T09:00:00Z', '2030-06-01T10:00:00Z');
    expect((await occurrencesOf(agent, single.id)).body).toEqual({ items: [{ startsAt: single.startsAt, endsAt: single.endsAt }] });
    clock.set('2030-06-01T09:00:01Z');
    try {
      expect((await occurrencesOf(agent, single.id)).body).toEqual({ items: [] });
    } finally {
      clock.set(NOW);
    }
  });

  it('answers 403 and 404 for occurrences like for the booking itself', async () => {
    const [owner, other] = [await createAgent(t, root), await createAgent(t, root)];
    const single = await createBooking(t, owner, '2030-06-02T09:00:00Z', '2030-06-02T10:00:00Z');
    expect((await occurrencesOf(other, single.id)).status).toBe(403);
    expect((await occurrencesOf(owner, '9d5ed678-fe57-4cca-b101-000000000000')).status).toBe(404);
    expect((await occurrencesOf(owner, single.id, 0)).status).toBe(400);
    expect((await occurrencesOf(owner, single.id, 201)).status).toBe(400);
  });

  it('keeps wall-clock time across a daylight-saving change with a TZID', async () => {
    const agent = await createAgent(t, root);
    // 09:00 in New York: 14:00Z in winter (EST), 13:00Z after 2030-03-10 (EDT).
    const created = await createSeries(
      agent,
      '2030-03-08T09:00:00-05:00',
      '2030-03-08T10:00:00-05:00',
      'DTSTART;TZID=America/New_York:20300308T090000\nRRULE:FREQ=DAILY;COUNT=4',
    );
    expect(created.errors).toBeUndefined();
    const { body } = await occurrencesOf(agent, created.data!.createBooking.id);
    expect(body.items.map((slot: { startsAt: string }) => slot.startsAt)).toEqual([
      '2030-03-08T14:00:00.000Z',
      '2030-03-09T14:00:00.000Z',
      '2030-03-10T13:00:00.000Z',
      '2030-03-11T13:00:00.000Z',
    ]);
  });

  it('cancelOccurrence removes one occurrence and frees its slot', async () => {
    const agent = await createAgent(t, root);
    const created = await createSeries(agent, '2030-07-01T09:00:00Z', '2030-07-01T10:00:00Z', 'FREQ=DAILY;COUNT=3');
    const id = created.data!.createBooking.id;
    const cancelled = await t.gql(CancelOccurrenceDocument, { bookingId: id, startsAt: '2030-07-02T09:00:00Z' }, bearer(agent.token));
    expect(cancelled.errors).toBeUndefined();
    const occurrences = await t.gql(OccurrencesDocument, { bookingId: id }, bearer(agent.token));
    expect(occurrences.data!.occurrences.map((slot) => slot.startsAt)).toEqual(['2030-07-01T09:00:00.000Z', '2030-07-03T09:00:00.000Z']);
    expect((await postBooking(t, agent, { startsAt: '2030-07-02T09:00:00Z', endsAt: '2030-07-02T10:00:00Z' })).statusCode).toBe(201);
    const missing = await t.gql(CancelOccurrenceDocument, { bookingId: id, startsAt: '2030-07-02T09:30:00Z' }, bearer(agent.token));
    expect(missing.errors?.[0]?.extensions).toEqual({ code: 'not_found' });
  });

  it('cancelOccurrence finds an occurrence a daylight-saving change moved (02:30 on the spring-forward day is 03:30 EDT)', async () => {
    const agent = await createAgent(t, root);
    const created = await createSeries(
      agent,
      '2030-03-09T02:30:00-05:00',
      '2030-03-09T03:00:00-05:00',
      'DTSTART;TZID=America/New_York:20300309T023000\nRRULE:FREQ=DAILY;COUNT=3',
    );
    const id = created.data!.createBooking.id;
    expect((await occurrencesOf(agent, id)).body.items.map((slot: { startsAt: string }) => slot.startsAt)).toEqual([
      '2030-03-09T07:30:00.000Z',
      '2030-03-10T07:30:00.000Z',
      '2030-03-11T06:30:00.000Z',
    ]);
    // Its wall-clock time (02:30) is before the wall clock of its instant (03:30): the search starts a margin earlier.
    const cancelled = await t.gql(CancelOccurrenceDocument, { bookingId: id, startsAt: '2030-03-10T07:30:00Z' }, bearer(agent.token));
    expect(cancelled.errors).toBeUndefined();
    expect((await occurrencesOf(agent, id)).body.items).toHaveLength(2);
    expect(await t.query('select count(*)::int as slots from booking_slots where booking_id = $1', [id])).toEqual([{ slots: 2 }]);
  });

  it('cancelOccurrence twice in one operation: the second sees the first (not_found), one EXDATE; after cancelBooking it refuses', async () => {
    const agent = await createAgent(t, root);
    const created = await createSeries(agent, '2030-10-01T09:00:00Z', '2030-10-01T10:00:00Z', 'FREQ=DAILY;COUNT=5');
    const id = created.data!.createBooking.id;
    const graphql = async (query: string) =>
      (await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query } })).json() as {
        data?: Record<string, unknown> | null;
        errors?: { path?: string[]; extensions?: { code?: string } }[];
      };
    const twice = await graphql(
      `mutation { a: cancelOccurrence(bookingId: "${id}", startsAt: "2030-10-02T09:00:00Z") { id } b: cancelOccurrence(bookingId: "${id}", startsAt: "2030-10-02T09:00:00Z") { id } }`,
    );
    expect(twice.errors?.map((error) => [error.path?.[0], error.extensions?.code])).toEqual([['b', 'not_found']]);
    expect(await t.query('select exdates from bookings where id = $1', [id])).toEqual([{ exdates: ['2030-10-02T09:00:00.000Z'] }]);

    const afterCancel = await graphql(
      `mutation { a: cancelBooking(id: "${id}") { id } b: cancelOccurrence(bookingId: "${id}", startsAt: "2030-10-03T09:00:00Z") { id } }`,
    );
    expect(afterCancel.errors?.map((error) => [error.path?.[0], error.extensions?.code])).toEqual([['b', 'validation']]);
    expect(await t.query('select status, exdates from bookings where id = $1', [id])).toEqual([{ status: 'cancelled', exdates: ['2030-10-02T09:00:00.000Z'] }]);
  });

  it('extends open-ended series a year ahead every night, giving up occurrences taken meanwhile', async () => {
    const jobs = await startTestApp({ clock, databaseUrl: t.databaseUrl });
    try {
      const agent = await createAgent(t, root);
      clock.set('2030-01-01T00:00:00Z');
      const created = await createSeries(agent, '2030-01-07T09:00:00Z', '2030-01-07T10:00:00Z', 'FREQ=WEEKLY');
      const id = created.data!.createBooking.id;
      const lastSlot = async () => (await t.query<{ last: Date }>('select max(starts_at) as last from booking_slots where booking_id = $1', [id]))[0]!.last;
      expect((await lastSlot()).toISOString()).toBe('2031-01-06T09:00:00.000Z');

      // Beyond the first horizon the calendar is still free: a single booking takes a future Monday.
      const single = await createBooking(t, agent, '2031-01-20T09:30:00Z', '2031-01-20T10:00:00Z');
      clock.set('2030-02-01T00:00:00Z');
      await t.query(`select graphile_worker.add_job('extend_booking_horizons')`);
      for (let i = 0; i < 100 && (await lastSlot()).getTime() < Date.parse('2031-01-27T09:00:00Z'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await lastSlot()).toISOString()).toBe('2031-01-27T09:00:00.000Z');

      // The clashing occurrence left the series; the single booking stayed.
      const occurrences = await t.gql(OccurrencesDocument, { bookingId: id, limit: 200 }, bearer(agent.token));
      const starts = occurrences.data!.occurrences.map((slot) => slot.startsAt);
      expect(starts).toContain('2031-01-13T09:00:00.000Z');
      expect(starts).not.toContain('2031-01-20T09:00:00.000Z');
      expect(starts).toContain('2031-01-27T09:00:00.000Z');
      expect(await t.query('select status from bookings where id = $1', [single.id])).toEqual([{ status: 'confirmed' }]);
    } finally {
      clock.set(NOW);
      await jobs.app.close();
      await jobs.orm.close(true);
    }
  });

  it('extends a series none of whose slots is left: its booked occurrences cancelled, the next one beyond the horizon then', async () => {
    const jobs = await startTestApp({ clock, databaseUrl: t.databaseUrl });
    try {
      const agent = await createAgent(t, root);
      clock.set('2030-01-01T00:00:00Z');
      // Every other year: the only occurrence within the first 366 days is the booking's own.
      const created = await createSeries(agent, '2030-01-07T09:00:00Z', '2030-01-07T10:00:00Z', 'FREQ=YEARLY;INTERVAL=2');
      const id = created.data!.createBooking.id;
      expect((await t.gql(CancelOccurrenceDocument, { bookingId: id, startsAt: '2030-01-07T09:00:00Z' }, bearer(agent.token))).errors).toBeUndefined();
      const slots = () => t.query<{ starts_at: Date }>('select starts_at from booking_slots where booking_id = $1', [id]);
      expect(await slots()).toEqual([]);

      clock.set('2031-02-01T00:00:00Z');
      await t.query(`select graphile_worker.add_job('extend_booking_horizons')`);
      for (let i = 0; i < 100 && (await slots()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await slots()).map((slot) => slot.starts_at.toISOString())).toEqual(['2032-01-07T09:00:00.000Z']);
      expect(await t.query('select live_until from bookings where id = $1', [id])).toEqual([{ live_until: new Date('2032-01-07T10:00:00Z') }]);
    } finally {
      clock.set(NOW);
      await jobs.app.close();
      await jobs.orm.close(true);
    }
  });

  it('bookedSlots lists the live occurrences in a window with their booking, series expanded and cancelled occurrences left out', async () => {
    const agent = await createAgent(t, root);
    const series = await createSeries(agent, '2030-09-02T09:00:00Z', '2030-09-02T10:00:00Z', 'FREQ=DAILY;COUNT=10');
    const seriesId = series.data!.createBooking.id;
    const single = await createBooking(t, agent, '2030-09-05T12:00:00Z', '2030-09-05T13:00:00Z');
    const cancelled = await createBooking(t, agent, '2030-09-06T12:00:00Z', '2030-09-06T13:00:00Z');
    await t.rest({ method: 'DELETE', url: `/api/bookings/${cancelled.id}`, headers: bearer(agent.token) });
    await t.gql(CancelOccurrenceDocument, { bookingId: seriesId, startsAt: '2030-09-04T09:00:00Z' }, bearer(agent.token));

    // The week of Monday 2030-09-09 starts after the series' first occurrence: only its later ones are in it.
    const week = await t.gql(BookedSlotsDocument, { from: '2030-09-04T00:00:00Z', to: '2030-09-09T00:00:00Z' }, bearer(agent.token));
    expect(week.errors).toBeUndefined();
    expect(week.data!.bookedSlots.map((slot) => [slot.startsAt, slot.booking.id])).toEqual([
      ['2030-09-05T09:00:00.000Z', seriesId],
      ['2030-09-05T12:00:00.000Z', single.id],
      ['2030-09-06T09:00:00.000Z', seriesId],
      ['2030-09-07T09:00:00.000Z', seriesId],
      ['2030-09-08T09:00:00.000Z', seriesId],
    ]);
    expect(week.data!.bookedSlots[0]!.booking).toEqual({ id: seriesId, rrule: 'FREQ=DAILY;COUNT=10', startsAt: '2030-09-02T09:00:00.000Z', agent: { id: agent.id } });

    const other = await createAgent(t, root);
    const othersView = await t.gql(BookedSlotsDocument, { from: '2030-09-04T00:00:00Z', to: '2030-09-09T00:00:00Z' }, bearer(other.token));
    expect(othersView.data!.bookedSlots).toEqual([]);
  });

  it('freeBusy merges busy slots and lists the gaps inside the window', async () => {
    const agent = await createAgent(t, root);
    await createSeries(agent, '2030-08-01T09:00:00Z', '2030-08-01T10:00:00Z', 'FREQ=DAILY;COUNT=2');
    await createBooking(t, agent, '2030-08-01T10:00:00Z', '2030-08-01T11:00:00Z');
    const result = await t.gql(FreeBusyDocument, { from: '2030-08-01T08:00:00Z', to: '2030-08-02T09:30:00Z' }, bearer(agent.token));
    expect(result.data!.freeBusy).toEqual({
      busy: [
        { startsAt: '2030-08-01T09:00:00.000Z', endsAt: '2030-08-01T11:00:00.000Z' },
        { startsAt: '2030-08-02T09:00:00.000Z', endsAt: '2030-08-02T09:30:00.000Z' },
      ],
      free: [
        { startsAt: '2030-08-01T08:00:00.000Z', endsAt: '2030-08-01T09:00:00.000Z' },
        { startsAt: '2030-08-01T11:00:00.000Z', endsAt: '2030-08-02T09:00:00.000Z' },
      ],
    });
  });
});
