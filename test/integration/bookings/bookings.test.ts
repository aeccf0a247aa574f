import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot, postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import {
  BookingCursorsDocument,
  BookingDocument,
  BookingsDocument,
  BookingStatusesDocument,
  BookingsThroughFragmentsDocument,
  CancelBookingDocument,
  CreateBookingDocument,
  type BookingCursorsQuery,
  type BookingCursorsQueryVariables,
  type BookingsQuery,
  type BookingsQueryVariables,
} from '../../generated/graphql.js';
import { apiKey, bearer, startTestApp, type TestApp } from '../../harness.js';

const NOW = '2030-01-01T00:00:00.000Z';
const DAY = '2030-03-04T00:00:00.000Z';

describe('bookings', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date(NOW));

  beforeAll(async () => {
    t = await startTestApp({ clock, env: { BOOKING_CAP: '5' } });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const list = (agent: AgentWithToken, query = '') =>
    t.rest({ method: 'GET', url: `/api/bookings${query}`, headers: bearer(agent.token) });

  describe('POST /api/bookings', () => {
    it('creates a confirmed booking and answers the exact BookingItem in UTC', async () => {
      const agent = await createAgent(t, root);
      const response = await postBooking(t, agent, { startsAt: '2030-03-04T10:00:00+02:00', endsAt: '2030-03-04T11:30:00+02:00' });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['agentId', 'createdAt', 'endsAt', 'id', 'rrule', 'startsAt', 'status', 'warningSentAt']);
      expect(body).toEqual({
        id: expect.any(String),
        agentId: agent.id,
        startsAt: '2030-03-04T08:00:00.000Z',
        endsAt: '2030-03-04T09:30:00.000Z',
        status: 'confirmed',
        rrule: null,
        warningSentAt: null,
        createdAt: NOW,
      });
    });

    it('writes a booking, its slot and its event in one SQL statement, and lists a window in one', async () => {
      const agent = await createAgent(t, root);
      await list(agent); // resolves and caches the credential
      t.sql.reset();
      expect((await postBooking(t, agent, hourSlot(DAY, 20))).statusCode).toBe(201);
      expect(t.sql.statements).toEqual([expect.stringMatching(/^select create_booking\(/)]);
      t.sql.reset();
      expect((await list(agent, `?from=${DAY}&to=2030-03-05T00:00:00Z`)).json().items).toHaveLength(1);
      expect(t.sql.statements).toHaveLength(1);
      const [event] = await t.query<{ type: string }>('select type from booking_events where agent_id = $1', [agent.id]);
      expect(event).toEqual({ type: 'booking.created' });
    });

    it('keeps its database connections through refused writes (no reconnect per slot_taken)', async () => {
      const agent = await createAgent(t, root);
      expect((await postBooking(t, agent, hourSlot(DAY, 21))).statusCode).toBe(201);
      const sessions = async () =>
        (await t.query<{ sessions: number }>('select sessions::int from pg_stat_database where datname = current_database()'))[0]!.sessions;
      const before = await sessions();
      for (let i = 0; i < 20; i++) expect((await postBooking(t, agent, hourSlot(DAY, 21))).statusCode).toBe(409);
      // t.query itself opens one session per call; a reconnecting pool would add 20 more.
      expect((await sessions()) - before).toBeLessThanOrEqual(2);
    });

    it('answers 403 forbidden when agentId is not the credential’s agent', async () => {
      const [a, b] = [await createAgent(t, root), await createAgent(t, root)];
      const response = await postBooking(t, a, { agentId: b.id, ...hourSlot(DAY, 1) });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'forbidden', message: expect.any(String) });
      expect((await list(b)).json().items).toEqual([]);
    });

    it('answers 401 without or with a bad credential', async () => {
      const body = { agentId: root.id, ...hourSlot(DAY, 1) };
      expect((await t.rest({ method: 'POST', url: '/api/bookings', payload: body })).statusCode).toBe(401);
      expect((await t.rest({ method: 'POST', url: '/api/bookings', payload: body, headers: bearer('agt_nope') })).statusCode).toBe(401);
    });

    it.each([
      ['an rrule (REST allows no extra properties)', { rrule: 'FREQ=DAILY' }, 'rrule', 'is not allowed'],
      ['a date-time without offset', { startsAt: '2030-03-04T10:00:00', endsAt: '2030-03-04T11:00:00Z' }, 'startsAt', /offset/],
      ['a date that is not a date', { startsAt: 'tomorrow', endsAt: '2030-03-04T11:00:00Z' }, 'startsAt', /offset/],
      ['endsAt before startsAt', { startsAt: '2030-03-04T11:00:00Z', endsAt: '2030-03-04T10:00:00Z' }, 'endsAt', 'must be after startsAt'],
      ['an empty range', { startsAt: '2030-03-04T11:00:00Z', endsAt: '2030-03-04T11:00:00Z' }, 'endsAt', 'must be after startsAt'],
      ['a missing endsAt', { startsAt: '2030-03-04T11:00:00Z' }, 'endsAt', 'is required'],
      ['an agentId of 129 characters', { agentId: 'a'.repeat(129), startsAt: '2030-03-04T11:00:00Z', endsAt: '2030-03-04T12:00:00Z' }, 'agentId', /more than 128/],
      ['a numeric startsAt', { startsAt: 1, endsAt: '2030-03-04T12:00:00Z' }, 'startsAt', /string/],
      ['a start in year 0100', { startsAt: '0100-03-01T10:00:00Z', endsAt: '0100-03-01T11:00:00Z' }, 'startsAt', /must be from 2000-01-01/],
      ['a start a second before 2000', { startsAt: '1999-12-31T23:59:59Z', endsAt: '2000-01-01T01:00:00Z' }, 'startsAt', /must be from 2000-01-01/],
      ['an end a second after 2199', { startsAt: '2199-12-31T23:00:00Z', endsAt: '2200-01-01T00:00:01Z' }, 'endsAt', /before 2200-01-01/],
    ])('answers 400 naming the field for %s', async (_label, body, field, message) => {
      const agent = await createAgent(t, root);
      const response = await postBooking(t, agent, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[field as string]).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
      const n = (await t.query<{ n: number }>('select count(*)::int as n from bookings where agent_id = $1', [agent.id]))[0]?.n;
      expect(n).toBe(0);
    });

    it('books the first and the last bookable hour (2000-01-01 to 2200-01-01)', async () => {
      const agent = await createAgent(t, root);
      expect((await postBooking(t, agent, { startsAt: '2000-01-01T00:00:00Z', endsAt: '2000-01-01T01:00:00Z' })).statusCode).toBe(201);
      expect((await postBooking(t, agent, { startsAt: '2199-12-31T23:00:00Z', endsAt: '2200-01-01T00:00:00Z' })).statusCode).toBe(201);
    });

    it('refuses an overlap with 409 slot_taken and allows back-to-back bookings', async () => {
      const agent = await createAgent(t, root);
      await createBooking(t, agent, '2030-03-04T10:00:00Z', '2030-03-04T11:00:00Z');
      const overlap = await postBooking(t, agent, { startsAt: '2030-03-04T10:59:00Z', endsAt: '2030-03-04T12:00:00Z' });
      expect(overlap.statusCode).toBe(409);
      expect(overlap.json()).toEqual({ error: 'slot_taken', message: expect.any(String) });
      const inside = await postBooking(t, agent, { startsAt: '2030-03-04T10:15:00Z', endsAt: '2030-03-04T10:45:00Z' });
      expect(inside.statusCode).toBe(409);
      expect((await postBooking(t, agent, { startsAt: '2030-03-04T11:00:00Z', endsAt: '2030-03-04T12:00:00Z' })).statusCode).toBe(201);
      expect((await postBooking(t, agent, { startsAt: '2030-03-04T09:00:00Z', endsAt: '2030-03-04T10:00:00Z' })).statusCode).toBe(201);
    });

    it('lets two agents book the same time', async () => {
      const [a, b] = [await createAgent(t, root), await createAgent(t, root)];
      const first = await createBooking(t, a, '2030-03-05T10:00:00Z', '2030-03-05T11:00:00Z');
      const second = await createBooking(t, b, '2030-03-05T10:00:00Z', '2030-03-05T11:00:00Z');
      expect(second).toMatchObject({ status: 'confirmed', startsAt: first.startsAt, endsAt: first.endsAt });
      expect(second.id).not.toBe(first.id);
      expect((await list(b)).json().items).toEqual([expect.objectContaining({ id: second.id })]);
    });

    it('frees the slot of a cancelled booking', async () => {
      const agent = await createAgent(t, root);
      const booking = await createBooking(t, agent, '2030-03-06T10:00:00Z', '2030-03-06T11:00:00Z');
      await t.rest({ method: 'DELETE', url: `/api/bookings/${booking.id}`, headers: bearer(agent.token) });
      expect((await postBooking(t, agent, { startsAt: '2030-03-06T10:00:00Z', endsAt: '2030-03-06T11:00:00Z' })).statusCode).toBe(201);
    });

    it('lets exactly one of 50 simultaneous overlapping creates win', async () => {
      const agent = await createAgent(t, root);
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          postBooking(t, agent, { startsAt: `2030-04-01T10:${String(i).padStart(2, '0')}:00Z`, endsAt: '2030-04-01T11:30:00Z' }),
        ),
      );
      const statuses = responses.map((response) => response.statusCode);
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(49);
      expect(responses.filter((r) => r.statusCode === 409).every((r) => r.json().error === 'slot_taken')).toBe(true);
      const n = (await t.query<{ n: number }>('select count(*)::int as n from bookings where agent_id = $1', [agent.id]))[0]?.n;
      expect(n).toBe(1);
    });
  });

  describe('the booking cap (BOOKING_CAP=5)', () => {
    it('answers 429 booking_cap_reached once five bookings have not ended', async () => {
      const agent = await createAgent(t, root);
      for (let i = 0; i < 5; i++) await createBooking(t, agent, hourSlot(DAY, i * 2).startsAt, hourSlot(DAY, i * 2).endsAt);
      const sixth = await postBooking(t, agent, hourSlot(DAY, 20));
      expect(sixth.statusCode).toBe(429);
      expect(sixth.json()).toEqual({ error: 'booking_cap_reached', message: expect.any(String) });
    });

    it('does not count cancelled bookings nor bookings that have ended', async () => {
      const agent = await createAgent(t, root);
      // Two bookings in the past (before the test clock's now) and one cancelled.
      clock.set('2029-06-01T00:00:00Z');
      await createBooking(t, agent, '2029-06-02T10:00:00Z', '2029-06-02T11:00:00Z');
      await createBooking(t, agent, '2029-06-03T10:00:00Z', '2029-06-03T11:00:00Z');
      clock.set(NOW);
      const cancelled = await createBooking(t, agent, hourSlot(DAY, 0).startsAt, hourSlot(DAY, 0).endsAt);
      await t.rest({ method: 'DELETE', url: `/api/bookings/${cancelled.id}`, headers: bearer(agent.token) });
      for (let i = 1; i <= 5; i++) {
        const response = await postBooking(t, agent, hourSlot(DAY, i * 2));
        expect(response.statusCode).toBe(201);
      }
      expect((await postBooking(t, agent, hourSlot(DAY, 30))).statusCode).toBe(429);
    });

    it('is never exceeded by 20 simultaneous creates', async () => {
      const agent = await createAgent(t, root);
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => postBooking(t, agent, hourSlot(DAY, i * 2))));
      const statuses = responses.map((response) => response.statusCode);
      expect(statuses.filter((status) => status === 201)).toHaveLength(5);
      expect(statuses.filter((status) => status === 429)).toHaveLength(15);
      const n = (await t.query<{ n: number }>("select count(*)::int as n from bookings where agent_id = $1 and status = 'confirmed'", [agent.id]))[0]?.n;
      expect(n).toBe(5);
    });
  });

  describe('GET /api/bookings', () => {
    let agent: AgentWithToken;
    let ids: Record<string, string>;
    beforeAll(async () => {
      agent = await createAgent(t, root);
      ids = {
        nine: (await createBooking(t, agent, '2030-05-01T09:00:00Z', '2030-05-01T10:00:00Z')).id,
        ten: (await createBooking(t, agent, '2030-05-01T10:00:00Z', '2030-05-01T11:00:00Z')).id,
        noon: (await createBooking(t, agent, '2030-05-01T12:00:00Z', '2030-05-01T13:00:00Z')).id,
        early: (await createBooking(t, agent, '2030-05-01T07:00:00Z', '2030-05-01T08:00:00Z')).id,
      };
      await t.rest({ method: 'DELETE', url: `/api/bookings/${ids.noon}`, headers: bearer(agent.token) });
    });

    const idsOf = (response: { json(): { items: { id: string }[] } }) => response.json().items.map((item) => item.id);

    it('lists confirmed and cancelled bookings of the caller by startsAt', async () => {
      const response = await list(agent);
      expect(response.statusCode).toBe(200);
      expect(idsOf(response)).toEqual([ids.early, ids.nine, ids.ten, ids.noon]);
      expect(response.json().items.map((item: { status: string }) => item.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'cancelled']);
    });

    it('returns bookings intersecting the half-open window [from, to)', async () => {
      // A booking ending exactly at `from` and one starting exactly at `to` are outside.
      const window = await list(agent, '?from=2030-05-01T10:00:00Z&to=2030-05-01T12:00:00Z');
      expect(idsOf(window)).toEqual([ids.ten]);
      const wider = await list(agent, `?from=${encodeURIComponent('2030-05-01T11:59:59+02:00')}`);
      expect(idsOf(wider)).toEqual([ids.nine, ids.ten, ids.noon]);
      expect(idsOf(await list(agent, '?to=2030-05-01T09:00:01Z'))).toEqual([ids.early, ids.nine]);
    });

    it('answers no items for an empty window (from = to)', async () => {
      expect(idsOf(await list(agent, '?from=2030-05-01T09:30:00Z&to=2030-05-01T09:30:00Z'))).toEqual([]);
    });

    it('honours limit', async () => {
      expect(idsOf(await list(agent, '?limit=2'))).toEqual([ids.early, ids.nine]);
    });

    it.each([
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=ten', 'limit'],
      ['?limit=1.5', 'limit'],
      ['?from=yesterday', 'from'],
      ['?from=2030-05-01T10:00:00', 'from'],
      ['?from=2030-05-01T23:59:60Z', 'from'],
      ['?from=2030-05-01T12:00:00Z&to=2030-05-01T10:00:00Z', 'to'],
    ])('answers 400 for %s', async (query, field) => {
      const response = await list(agent, query);
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json().errors)).toEqual([field]);
    });

    it('shows nobody else’s bookings', async () => {
      const other = await createAgent(t, root);
      expect(idsOf(await list(other))).toEqual([]);
    });
  });

  describe('DELETE /api/bookings/{id}', () => {
    it('soft-cancels: 204, the row stays, and again 204', async () => {
      const agent = await createAgent(t, root);
      const booking = await createBooking(t, agent, '2030-06-01T10:00:00Z', '2030-06-01T11:00:00Z');
      const first = await t.rest({ method: 'DELETE', url: `/api/bookings/${booking.id}`, headers: apiKey(agent.token) });
      expect(first.statusCode).toBe(204);
      expect(first.body).toBe('');
      const again = await t.rest({ method: 'DELETE', url: `/api/bookings/${booking.id}`, headers: apiKey(agent.token) });
      expect(again.statusCode).toBe(204);
      const rows = await t.query<{ status: string }>('select status from bookings where id = $1', [booking.id]);
      expect(rows).toEqual([{ status: 'cancelled' }]);
    });

    it('answers 403 for another agent’s booking and leaves it confirmed', async () => {
      const [owner, intruder] = [await createAgent(t, root), await createAgent(t, root)];
      const booking = await createBooking(t, owner, '2030-06-02T10:00:00Z', '2030-06-02T11:00:00Z');
      const response = await t.rest({ method: 'DELETE', url: `/api/bookings/${booking.id}`, headers: bearer(intruder.token) });
      expect(response.statusCode).toBe(403);
      expect(response.json().error).toBe('forbidden');
      expect(await t.query('select status from bookings where id = $1', [booking.id])).toEqual([{ status: 'confirmed' }]);
    });

    it('answers 404 only when no booking has that id', async () => {
      for (const id of ['7b0b5bd5-1111-4b3c-9c1e-000000000000', 'not-a-uuid']) {
        const response = await t.rest({ method: 'DELETE', url: `/api/bookings/${id}`, headers: bearer(root.token) });
        expect(response.statusCode).toBe(404);
        expect(response.json().error).toBe('not_found');
      }
    });

    it('answers 401 without a credential', async () => {
      expect((await t.rest({ method: 'DELETE', url: '/api/bookings/x' })).statusCode).toBe(401);
    });
  });

  describe('Idempotency-Key on POST /api/bookings', () => {
    it('replays the first response for the same body, 409 conflict for another body', async () => {
      const agent = await createAgent(t, root);
      const slot = hourSlot('2030-07-01T00:00:00Z', 10);
      const first = await postBooking(t, agent, slot, { 'idempotency-key': 'book-1' });
      expect(first.statusCode).toBe(201);
      const replay = await postBooking(t, agent, { endsAt: slot.endsAt, startsAt: slot.startsAt }, { 'idempotency-key': 'book-1' });
      expect(replay.statusCode).toBe(201);
      expect(replay.json()).toEqual(first.json());
      const other = await postBooking(t, agent, hourSlot('2030-07-01T00:00:00Z', 12), { 'idempotency-key': 'book-1' });
      expect(other.statusCode).toBe(409);
      expect(other.json().error).toBe('conflict');
      const n = (await t.query<{ n: number }>('select count(*)::int as n from bookings where agent_id = $1', [agent.id]))[0]?.n;
      expect(n).toBe(1);
    });

    it('replays the first refusal too, and keys are per agent', async () => {
      const [agent, other] = [await createAgent(t, root), await createAgent(t, root)];
      const slot = hourSlot('2030-07-02T00:00:00Z', 10);
      await createBooking(t, agent, slot.startsAt, slot.endsAt);
      const refused = await postBooking(t, agent, slot, { 'idempotency-key': 'book-2' });
      expect(refused.statusCode).toBe(409);
      const replay = await postBooking(t, agent, slot, { 'idempotency-key': 'book-2' });
      expect({ status: replay.statusCode, body: replay.json() }).toEqual({ status: 409, body: refused.json() });
      expect((await postBooking(t, other, slot, { 'idempotency-key': 'book-2' })).statusCode).toBe(201);
    });

    it('creates one booking for 10 simultaneous requests with one key and replays it to all', async () => {
      const agent = await createAgent(t, root);
      const slot = hourSlot('2030-07-03T00:00:00Z', 10);
      const responses = await Promise.all(Array.from({ length: 10 }, () => postBooking(t, agent, slot, { 'idempotency-key': 'book-3' })));
      expect(responses.map((response) => response.statusCode)).toEqual(Array(10).fill(201));
      expect(new Set(responses.map((response) => response.json().id)).size).toBe(1);
    });
  });

  describe('GraphQL', () => {
    it('createBooking, booking and cancelBooking go through the same rules', async () => {
      const agent = await createAgent(t, root, 'gql-agent');
      const created = await t.gql(
        CreateBookingDocument,
        { input: { agentId: agent.id, startsAt: '2030-08-01T10:00:00+01:00', endsAt: '2030-08-01T11:00:00+01:00' } },
        bearer(agent.token),
      );
      expect(created.errors).toBeUndefined();
      const booking = created.data!.createBooking;
      expect(booking).toMatchObject({ agentId: agent.id, startsAt: '2030-08-01T09:00:00.000Z', status: 'confirmed', rrule: null });

      const clash = await t.gql(
        CreateBookingDocument,
        { input: { agentId: agent.id, startsAt: '2030-08-01T09:30:00Z', endsAt: '2030-08-01T10:30:00Z' } },
        bearer(agent.token),
      );
      expect(clash.errors?.[0]?.extensions).toEqual({ code: 'slot_taken' });

      const fetched = await t.gql(BookingDocument, { id: booking.id }, bearer(agent.token));
      expect(fetched.data!.booking.agent).toEqual({ id: agent.id, name: 'gql-agent' });

      const intruder = await createAgent(t, root);
      const forbidden = await t.gql(CancelBookingDocument, { id: booking.id }, bearer(intruder.token));
      expect(forbidden.errors?.[0]?.extensions).toEqual({ code: 'forbidden' });

      const cancelled = await t.gql(CancelBookingDocument, { id: booking.id }, bearer(agent.token));
      expect(cancelled.data!.cancelBooking.status).toBe('cancelled');
    });

    it('answers validation with the field map', async () => {
      const agent = await createAgent(t, root);
      const result = await t.gql(
        CreateBookingDocument,
        { input: { agentId: agent.id, startsAt: '2030-08-01T10:00:00Z', endsAt: '2030-08-01T09:00:00Z' } },
        bearer(agent.token),
      );
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { endsAt: 'must be after startsAt' } });
    });

    it('pages through bookings with cursors', async () => {
      const agent = await createAgent(t, root);
      for (let i = 0; i < 5; i++) await createBooking(t, agent, hourSlot('2030-09-01T00:00:00Z', i).startsAt, hourSlot('2030-09-01T00:00:00Z', i).endsAt);
      const seen: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 3; page++) {
        const result: Awaited<ReturnType<typeof t.gql<BookingsQuery, BookingsQueryVariables>>> = await t.gql(
          BookingsDocument,
          { first: 2, after },
          bearer(agent.token),
        );
        const connection = result.data!.bookings;
        seen.push(...connection.edges.map((edge) => edge.node.startsAt));
        after = connection.pageInfo.endCursor ?? null;
        if (!connection.pageInfo.hasNextPage) break;
      }
      expect(seen).toEqual(Array.from({ length: 5 }, (_, i) => hourSlot('2030-09-01T00:00:00Z', i).startsAt));
    });

    /** The columns the one page statement since the last reset selected. */
    const pageColumns = () => {
      const pages = t.sql.statements.filter((statement) => /from bookings/.test(statement));
      expect(pages).toHaveLength(1);
      return /select (.*?) from bookings/s.exec(pages[0]!)![1]!.split(',').map((column) => column.trim());
    };

    it('reads only the columns of the fields a page selects, and those every page needs', async () => {
      const agent = await createAgent(t, root);
      const made = await createBooking(t, agent, '2030-10-01T10:00:00Z', '2030-10-01T11:00:00Z');
      t.sql.reset();
      const result = await t.gql(BookingStatusesDocument, { first: 10 }, bearer(agent.token));
      expect(result.data!.bookings.edges.map((edge) => edge.node)).toEqual([{ id: made.id, status: 'confirmed' }]);
      // Its order and cursor (starts_at, id) and its owner (agent_id) besides what was selected.
      expect(pageColumns()).toEqual(['id', 'agent_id', 'starts_at', 'status']);
    });

    it('reads the fields selected through fragments, aliases and inline fragments, as the full booking has them', async () => {
      const agent = await createAgent(t, root);
      const created = await t.gql(
        CreateBookingDocument,
        { input: { agentId: agent.id, startsAt: '2030-10-02T10:00:00Z', endsAt: '2030-10-02T11:00:00Z', rrule: 'FREQ=DAILY;COUNT=3' } },
        bearer(agent.token),
      );
      const full = (await t.gql(BookingDocument, { id: created.data!.createBooking.id }, bearer(agent.token))).data!.booking;
      t.sql.reset();
      const result = await t.gql(BookingsThroughFragmentsDocument, { first: 10 }, bearer(agent.token));
      expect(result.data!.bookings.edges.map((edge) => edge.node)).toEqual([{ id: full.id, endsAt: full.endsAt, created: full.createdAt, rrule: 'FREQ=DAILY;COUNT=3', version: full.version }]);
      expect(pageColumns()).toEqual(['id', 'agent_id', 'starts_at', 'ends_at', 'rrule', 'created_at', 'version']);
    });

    it.each([
      [
        'a second selection of the field included by a variable',
        `query Page($full: Boolean!) {
           bookings(first: 10) { edges { node { id } } }
           ... @include(if: $full) { bookings(first: 10) { edges { node { status } } } }
         }`,
        [
          { variables: { full: false }, node: (id: string) => ({ id }) },
          { variables: { full: true }, node: (id: string) => ({ id, status: 'confirmed' }) },
          { variables: { full: true }, node: (id: string) => ({ id, status: 'confirmed' }) },
        ],
      ],
      [
        'two operations of one document sharing the field through a fragment',
        `fragment Page on Query { bookings(first: 10) { edges { node { id } } } }
         query Small { ...Page }
         query Big { ...Page bookings(first: 10) { edges { node { status } } } }`,
        [
          { operationName: 'Small', node: (id: string) => ({ id }) },
          { operationName: 'Big', node: (id: string) => ({ id, status: 'confirmed' }) },
          { operationName: 'Big', node: (id: string) => ({ id, status: 'confirmed' }) },
        ],
      ],
    ])('reads the fields of every selection of the page: %s, run interpreted then compiled', async (_case, query, requests) => {
      const agent = await createAgent(t, root);
      const made = await createBooking(t, agent, '2030-10-04T10:00:00Z', '2030-10-04T11:00:00Z');
      for (const { node, ...request } of requests) {
        const response = await t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...bearer(agent.token) }, payload: { query, ...request } });
        const body = response.json<{ data?: { bookings: { edges: { node: unknown }[] } }; errors?: unknown }>();
        expect(body.errors).toBeUndefined();
        expect(body.data!.bookings.edges.map((edge) => edge.node)).toEqual([node(made.id)]);
      }
    });

    it('pages with cursors alone as with the nodes', async () => {
      const agent = await createAgent(t, root);
      for (let i = 0; i < 5; i++) await createBooking(t, agent, hourSlot('2030-10-03T00:00:00Z', i).startsAt, hourSlot('2030-10-03T00:00:00Z', i).endsAt);
      const withNodes = (await t.gql(BookingsDocument, { first: 5 }, bearer(agent.token))).data!.bookings.edges.map((edge) => edge.cursor);
      const cursors: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 3; page++) {
        const result: Awaited<ReturnType<typeof t.gql<BookingCursorsQuery, BookingCursorsQueryVariables>>> = await t.gql(BookingCursorsDocument, { first: 2, after }, bearer(agent.token));
        const connection = result.data!.bookings;
        cursors.push(...connection.edges.map((edge) => edge.cursor));
        expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)!.cursor);
        after = connection.pageInfo.endCursor ?? null;
        if (!connection.pageInfo.hasNextPage) break;
      }
      expect(cursors).toEqual(withNodes);
      expect(cursors).toHaveLength(5);
    });

    it.each([
      ['not base64 of anything', 'garbage'],
      ['a date and no id', Buffer.from('2030-09-01T00:00:00.000Z|').toString('base64url')],
      ['an id that is not a UUID', Buffer.from('2030-09-01T00:00:00.000Z|not-a-uuid').toString('base64url')],
      ['no date', Buffer.from('yesterday|00000000-0000-4000-8000-000000000000').toString('base64url')],
    ])('answers validation naming `after` for a cursor with %s', async (_case, after) => {
      const agent = await createAgent(t, root);
      const result = await t.gql(BookingsDocument, { first: 2, after }, bearer(agent.token));
      expect(result.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { after: 'is not a cursor from this list' } });
    });

    it('loads 50 bookings with their agent in a constant number of SQL statements', async () => {
      const big = await startTestApp({ clock, env: { BOOKING_CAP: '100' } });
      try {
        const owner = await bootstrapAgent(big, 'owner');
        for (let i = 0; i < 50; i++) await createBooking(big, owner, hourSlot(DAY, i).startsAt, hourSlot(DAY, i).endsAt);
        big.sql.reset();
        const result = await big.gql(BookingsDocument, { first: 50 }, bearer(owner.token));
        expect(result.errors).toBeUndefined();
        expect(result.data!.bookings.edges).toHaveLength(50);
        expect(result.data!.bookings.edges.every((edge) => edge.node.agent.name === 'owner')).toBe(true);
        // The page is the only statement: the credential was resolved (and cached) by the creates, and
        // the caller primes the agent loader.
        expect(big.sql.statements).toHaveLength(1);
        expect(big.sql.statements[0]).toMatch(/from bookings/);
      } finally {
        await big.close();
      }
    });
  });
});
