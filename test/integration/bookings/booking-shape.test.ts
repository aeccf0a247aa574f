import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { ALL_BOOKING_FIELDS, BOOKING_FIELDS, bookingColumns, bookingItemOfRow, bookingProjection, type BookingRow } from '../../../src/modules/bookings/booking.shape.js';
import { bookingItem } from '../../../src/modules/bookings/rest/booking.schemas.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, postBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { BookingDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Issue 25 item 3: one booking shape. The JS row mapper and SQL's `booking_item()` are both written from
 * booking.shape.ts; these tests hold them to each other on real rows, and every event type to the item the
 * API answers for the same booking.
 */
describe('one booking shape', () => {
  let t: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date('2030-01-01T00:00:00.000Z'));

  beforeAll(async () => {
    t = await startTestApp({ clock, env: { REMINDER_LEAD_MINUTES: '15' } });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  /** The same rows through both writers: the pool's text → bookingItemOfRow, and booking_item() in SQL. */
  async function bothWriters(where: string, params: unknown[]) {
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const rows = await pool.query<BookingRow & { item: unknown }>(`select ${bookingColumns('b')}, booking_item(b) as item from bookings b where ${where} order by b.id`, params);
      return rows.rows.map((row) => ({ js: bookingItemOfRow(row), sql: row.item }));
    } finally {
      await pool.end();
    }
  }

  it('maps a projection of a row as the full item has its fields: the key ones and those asked for, no others', async () => {
    const agent = await createAgent(t, root);
    const booking = await createBooking(t, agent, '2030-02-03T10:00:00Z', '2030-02-03T11:00:00Z');
    await t.query(`update bookings set created_at = '2030-01-01 00:00:00.123456+00', warning_sent_at = '2030-02-03 09:45:00.999999+00' where id = $1`, [booking.id]);
    const [row] = await t.query<BookingRow>(`select ${bookingColumns()} from bookings where id = $1`, [booking.id]);
    const full = bookingItemOfRow(row!);
    const asked = [[], ['status'], ['warningSentAt', 'createdAt', 'agent', '__typename'], ['endsAt', 'rrule', 'version']];
    for (const names of asked) {
      const projection = bookingProjection(names);
      const fields = BOOKING_FIELDS.filter((field) => ['id', 'agentId', 'startsAt', ...names].includes(field.name));
      expect(projection.columns).toBe(fields.map((field) => field.column).join(', '));
      expect(projection.itemOfRow(row!)).toStrictEqual(Object.fromEntries(fields.map((field) => [field.name, full[field.name]])));
      // Made once per set of fields.
      expect(bookingProjection([...names].reverse())).toBe(projection);
    }
    expect(bookingProjection(BOOKING_FIELDS.map((field) => field.name))).toBe(ALL_BOOKING_FIELDS);
  });

  it('writes the same item from a row in JavaScript and in SQL, every field of the shape, microseconds and nulls included', async () => {
    const agent = await createAgent(t, root);
    const booking = await createBooking(t, agent, '2030-02-01T10:00:00Z', '2030-02-01T11:00:00Z');
    // Values only SQL could have written: microseconds, a reminder mark, a rule.
    await t.query(`update bookings set created_at = '2030-01-01 00:00:00.123456+00', warning_sent_at = '2030-02-01 09:45:00.999999+00', rrule = 'FREQ=DAILY;COUNT=1' where id = $1`, [booking.id]);
    const other = await createBooking(t, agent, '2030-02-02T10:00:00Z', '2030-02-02T11:00:00Z');
    const pairs = await bothWriters('b.agent_id = $1', [agent.id]);
    expect(pairs).toHaveLength(2);
    for (const { js, sql } of pairs) {
      expect(Object.keys(js)).toEqual(BOOKING_FIELDS.map((field) => field.name));
      expect(sql).toEqual(js);
    }
    const written = pairs.find((pair) => pair.js.id === booking.id)!.js;
    expect(written).toMatchObject({ createdAt: '2030-01-01T00:00:00.123Z', warningSentAt: '2030-02-01T09:45:00.999Z', rrule: 'FREQ=DAILY;COUNT=1' });
    expect(pairs.find((pair) => pair.js.id === other.id)!.js).toMatchObject({ warningSentAt: null, rrule: null });
  });

  it('answers REST and GraphQL with the item SQL writes, and lists the fields of the shape in the REST schema', async () => {
    // REST's body is seed 000's BookingItem: every field of the shape but those beyond the seed (the version, sent as the ETag).
    const seedFields = BOOKING_FIELDS.filter((field) => !('beyondSeed' in field)).map((field) => field.name);
    expect(Object.keys(bookingItem.properties)).toEqual(seedFields);
    expect(BOOKING_FIELDS.map((field) => field.name)).toEqual([...seedFields, 'version']);
    const agent = await createAgent(t, root);
    const posted = await postBooking(t, agent, { startsAt: '2030-02-03T10:00:00Z', endsAt: '2030-02-03T11:00:00Z' });
    const created = posted.json();
    const [{ js }] = (await bothWriters('b.id = $1', [created.id])) as unknown as [{ js: Record<string, unknown> }];
    const { version, ...seedItem } = js;
    expect(created).toEqual(seedItem);
    expect(posted.headers.etag).toBe(`"${version}"`);
    const listed = await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) });
    expect(listed.json().items).toEqual([seedItem]);
    const graphql = await t.gql(BookingDocument, { id: created.id }, bearer(agent.token));
    const { agent: owner, __typename, ...fields } = graphql.data!.booking as Record<string, unknown>;
    expect(owner).toMatchObject({ id: agent.id });
    expect(__typename).toBeUndefined();
    expect(fields).toEqual(js);
  });

  it('carries in every event type exactly the item the API answers for the booking at that moment', async () => {
    const [agent, proposer] = [await createAgent(t, root), await createAgent(t, root)];
    // Inside the reminder lead: the reminder is sent at once.
    const soon = new Date(clock.now().getTime() + 10 * 60_000);
    const created = await createBooking(t, agent, soon.toISOString(), new Date(soon.getTime() + 3_600_000).toISOString());
    const reminded = await eventuallyRow(() => t.query<{ booking: unknown }>(`select booking from booking_events where booking_id = $1 and type = 'booking.reminder'`, [created.id]));
    const proposal = await t.rest({
      method: 'POST',
      url: '/api/proposals',
      headers: bearer(proposer.token),
      payload: { targetAgentId: agent.id, startsAt: created.startsAt, endsAt: created.endsAt },
    });
    expect((await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.json().id}/accept`, headers: bearer(agent.token) })).statusCode).toBe(200);
    const transferred = await t.query<{ booking: { agentId: string } }>(`select booking from booking_events where booking_id = $1 and type = 'booking.transferred'`, [created.id]);
    expect((await t.rest({ method: 'DELETE', url: `/api/bookings/${created.id}`, headers: bearer(proposer.token) })).statusCode).toBe(204);
    const [now] = (await bothWriters('b.id = $1', [created.id])) as unknown as [{ js: Record<string, unknown> }];
    const cancelled = await t.query<{ booking: unknown }>(`select booking from booking_events where booking_id = $1 and type = 'booking.cancelled'`, [created.id]);
    const first = await t.query<{ booking: unknown }>(`select booking from booking_events where booking_id = $1 and type = 'booking.created' order by id limit 1`, [created.id]);

    // Events carry the whole item, its version too (REST sends it as the ETag); each change raises it.
    expect(first[0]!.booking).toEqual({ ...created, version: 1 });
    expect(reminded.booking).toEqual({ ...created, warningSentAt: expect.stringMatching(/Z$/), version: 2 });
    expect(transferred[0]!.booking).toEqual({ ...(reminded.booking as object), agentId: proposer.id, version: 3 });
    expect(cancelled[0]!.booking).toEqual(now.js);
    expect(now.js).toMatchObject({ status: 'cancelled', agentId: proposer.id, version: 4 });
  });

  it('builds an event id in one place: the GraphQL event id and the webhook id are both evt_<cursor>', async () => {
    const offenders: string[] = [];
    const entries = await readdir('src', { withFileTypes: true, recursive: true });
    for (const entry of entries.filter((file) => file.isFile() && file.name.endsWith('.ts'))) {
      const file = join(entry.parentPath, entry.name);
      if (file === join('src/modules/booking-events/event-id.ts')) continue;
      if (/evt_\$\{|['"]evt_['"]/.test(await readFile(file, 'utf8'))) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});

async function eventuallyRow<Row>(read: () => Promise<Row[]>, timeoutMs = 10_000): Promise<Row> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await read();
    if (row) return row;
    if (Date.now() > deadline) throw new Error('no row in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
