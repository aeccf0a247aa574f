import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../../src/platform/db/embedded-postgres.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { subscribeToBookingEvents as subscribe } from '../../factories/booking-events.js';
import { startWebhookReceiver } from '../../factories/webhook-receiver.js';
import { FEED_CHECK_INTERVAL_MS } from '../../../src/modules/booking-events/booking-event-bus.js';
import { createTestDatabase, databaseEnv, startTestApp, type TestApp } from '../../harness.js';

const slotAt = (day: number) => {
  const start = new Date(Date.UTC(2033, 0, 1, 9) + day * 86_400_000);
  return { startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 3_600_000).toISOString() };
};

describe('bookingEvents subscription', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let url: string;
  let day = 0;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    url = `ws://127.0.0.1:${address.port}/graphql`;
  });
  afterAll(() => t.close());

  const book = (agent: AgentWithToken) => {
    const slot = slotAt(day++);
    return createBooking(t, agent, slot.startsAt, slot.endsAt);
  };

  it('delivers the caller’s own events live, and nobody else’s', async () => {
    const [agent, other] = [await createAgent(t, root, 'events-subscriber'), await createAgent(t, root)];
    const subscription = subscribe(url, agent.token);
    await subscription.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    await book(other);
    const mine = await book(agent);
    await t.rest({ method: 'DELETE', url: `/api/bookings/${mine.id}`, headers: { authorization: `Bearer ${agent.token}` } });
    const events = await subscription.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events.map((event) => [event.type, event.booking.id, event.booking.agentId])).toEqual([
      ['booking.created', mine.id, agent.id],
      ['booking.cancelled', mine.id, agent.id],
    ]);
    expect(events.map((event) => event.booking.agent)).toEqual([{ id: agent.id, name: 'events-subscriber' }, { id: agent.id, name: 'events-subscriber' }]);
    expect(events[0]!.id).toBe(`evt_${events[0]!.cursor}`);
    expect(BigInt(events[1]!.cursor)).toBeGreaterThan(BigInt(events[0]!.cursor));
    await subscription.close();
  });

  it('replays what came after a cursor, then goes live, with no gap and no duplicate', async () => {
    const agent = await createAgent(t, root);
    const live = subscribe(url, agent.token);
    await live.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 4; i++) await book(agent);
    const firstFour = await live.waitFor(4);
    await live.close();

    // Resume after the first event while more events keep arriving.
    const resumed = subscribe(url, agent.token, firstFour[0]!.cursor);
    const writes = Promise.all([book(agent), book(agent), book(agent)]);
    await writes;
    const events = await resumed.waitFor(6);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const cursors = events.map((event) => BigInt(event.cursor));
    expect(events).toHaveLength(6);
    expect(new Set(cursors).size).toBe(6);
    expect([...cursors].sort((a, b) => (a < b ? -1 : 1))).toEqual(cursors);
    expect(cursors.slice(0, 3)).toEqual(firstFour.slice(1).map((event) => BigInt(event.cursor)));
    await resumed.close();
  });

  it('replays what another process committed while the notification connection was down', async () => {
    const agent = await createAgent(t, root);
    const subscription = subscribe(url, agent.token);
    await subscription.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = await book(agent);
    await subscription.waitFor(1);

    // A second process writes while every LISTEN connection is cut: its announcement reaches no listener
    // (they reconnect after 1 s), and this process must find the event in the log once its connection is back.
    const writer = await startTestApp({ databaseUrl: t.databaseUrl, jobs: false });
    try {
      const terminated = await t.query<{ ok: boolean }>(
        `select pg_terminate_backend(pid) as ok from pg_stat_activity
          where datname = current_database() and application_name = 'gateway-notifications'`,
      );
      expect(terminated.length).toBe(2);
      const slot = slotAt(day++);
      const during = await createBooking(writer, agent, slot.startsAt, slot.endsAt);
      const events = await subscription.waitFor(2, 10_000);
      expect(events.map((event) => event.booking.id)).toEqual([before.id, during.id]);
    } finally {
      await writer.app.close();
      await writer.orm.close(true);
      await subscription.close();
    }
  });

  it('delivers an event that was committed but never announced, from the log', async () => {
    const agent = await createAgent(t, root);
    const subscription = subscribe(url, agent.token);
    await subscription.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const announced = await book(agent);
    // Written as a writer that died right after its commit would leave it: in the log, never announced.
    const [unannounced] = await t.query<{ cursor: string }>(
      `select record_booking_event($1, 'booking.cancelled', b, now())->>'eventId' as cursor from bookings b where b.id = $2`,
      [agent.id, announced.id],
    );
    const events = await subscription.waitFor(2, 10_000);
    expect(events.map((event) => event.cursor)).toEqual([expect.any(String), unannounced!.cursor]);
    // And the next announced event follows it without a gap or a repeat.
    const next = await book(agent);
    expect((await subscription.waitFor(3)).map((event) => event.booking.id)).toEqual([announced.id, announced.id, next.id]);
    await subscription.close();
  });

  it('lets go of a quiet agent’s live feed as soon as its last subscriber leaves', async () => {
    const quiet = await createAgent(t, root);
    const subscription = subscribe(url, quiet.token);
    await subscription.ready;
    await new Promise((resolve) => setTimeout(resolve, 200));
    await subscription.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A feed that is still held would compare itself with the log every FEED_CHECK_INTERVAL_MS.
    t.sql.reset();
    await new Promise((resolve) => setTimeout(resolve, FEED_CHECK_INTERVAL_MS + 500));
    expect(t.sql.statements.filter((sql) => sql.includes('from booking_events'))).toEqual([]);
  });

  it('refuses a subscription without a valid credential', async () => {
    const subscription = subscribe(url, 'agt_wrong');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(JSON.stringify(subscription.errors)).toContain('unauthorized');
    await subscription.close();
  });
});

/**
 * Issue 24: the log was read `order by id` with `id::text` in the select list, so PostgreSQL sorted the
 * text (10, 100, 101, …, 11, …, 2, 20, …) and, a page (200) at a time, skipped what sorted past it.
 * A fresh database, so the cursors start at 1 and cross 9 → 10 and 99 → 100.
 */
describe('replaying a long event log', () => {
  const EVENTS = 250;
  let t: TestApp;
  let root: AgentWithToken;
  let url: string;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    url = `ws://127.0.0.1:${address.port}/graphql`;
  });
  afterAll(() => t.close());

  const numeric = (cursors: string[]) => [...cursors].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));

  it('replays every event after any cursor once, in cursor order, across digit boundaries and pages', async () => {
    const agent = await createAgent(t, root);
    const live = subscribe(url, agent.token);
    await live.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < EVENTS; i++) {
      const slot = slotAt(i);
      await createBooking(t, agent, slot.startsAt, slot.endsAt);
    }
    const cursors = (await live.waitFor(EVENTS, 60_000)).map((event) => event.cursor);
    await live.close();
    expect(cursors).toEqual(numeric(cursors));
    // The cursors really have one, two and three digits.
    expect(new Set(cursors.map((cursor) => cursor.length))).toEqual(new Set([1, 2, 3]));

    // Resume after the first, the last one-digit, the last two-digit and the second-to-last cursor.
    const lastOfLength = (length: number) => cursors.filter((cursor) => cursor.length === length).at(-1)!;
    for (const after of [cursors[0]!, lastOfLength(1), lastOfLength(2), cursors.at(-2)!]) {
      const expected = cursors.slice(cursors.indexOf(after) + 1);
      const resumed = subscribe(url, agent.token, after);
      const events = await resumed.waitFor(expected.length, 30_000);
      // Nothing more arrives than what came after the cursor.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await resumed.close();
      expect({ after, cursors: events.map((event) => event.cursor) }).toEqual({ after, cursors: expected });
    }
  }, 120_000);

  it('catches a live subscriber up on a long run of events it was never told about, in order', async () => {
    const agent = await createAgent(t, root);
    // Booked before the subscription starts: only the unannounced events below are new to it.
    const slot = slotAt(EVENTS + 1);
    const booked = await createBooking(t, agent, slot.startsAt, slot.endsAt);
    const subscription = subscribe(url, agent.token);
    await subscription.ready;
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A log that has been running a while: these cursors cross 999 → 1000.
    await t.query(`select setval(pg_get_serial_sequence('booking_events', 'id'), 1000 - $1::int / 2)`, [EVENTS]);
    // Written as writers that died right after their commits would leave them: in the log, never
    // announced; the feed finds them at its next check and reads the log a page at a time.
    const written = await t.query<{ cursor: string }>(
      `select record_booking_event($1, 'booking.reminder', b, now())->>'eventId' as cursor
         from bookings b cross join generate_series(1, ${EVENTS}) where b.id = $2`,
      [agent.id, booked.id],
    );
    const expected = numeric(written.map((row) => row.cursor));
    expect(new Set(expected.map((cursor) => cursor.length))).toEqual(new Set([3, 4]));
    const events = await subscription.waitFor(EVENTS, FEED_CHECK_INTERVAL_MS * 5);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await subscription.close();
    expect(events.map((event) => event.cursor)).toEqual(expected);
  }, 60_000);
});

describe('two server processes on one database', () => {
  const children: ChildProcess[] = [];
  let databaseDrop: (() => Promise<void>) | undefined;

  afterAll(async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve(undefined);
            child.on('exit', resolve);
            child.kill('SIGTERM');
          }),
      ),
    );
    await databaseDrop?.();
  });

  async function startProcess(databaseUrl: string): Promise<string> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', 'src/main.ts'], {
      env: { ...process.env, NODE_OPTIONS: '', ...databaseEnv(databaseUrl), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${base}/readyz`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('server process did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return base;
  }

  const post = async (base: string, path: string, token: string | undefined, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, string>;
  };

  it('delivers an event written on B to a subscriber on A, and each webhook event once', async () => {
    const database = await createTestDatabase();
    databaseDrop = database.drop;
    const [a, b] = await Promise.all([startProcess(database.url), startProcess(database.url)]);
    const receiver = await startWebhookReceiver();
    try {
      const root = await post(b, '/api/agents', undefined, { name: 'root', bootstrap: true });
      await post(a, '/api/webhooks', root.public_token, { url: receiver.url, events: ['booking.created'] });
      const subscription = subscribe(`${a.replace('http', 'ws')}/graphql`, root.public_token!);
      await subscription.ready;
      await new Promise((resolve) => setTimeout(resolve, 200));

      const created: string[] = [];
      for (let i = 0; i < 6; i++) {
        const booking = await post(i % 2 ? a : b, '/api/bookings', root.public_token, { agentId: root.id, ...slotAt(i) });
        created.push(booking.id!);
      }
      const events = await subscription.waitFor(6);
      expect(events.map((event) => event.booking.id)).toEqual(created);

      await receiver.waitFor(6);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(receiver.hits).toBe(6);
      expect(new Set(receiver.received.map((message) => message.headers['webhook-id'])).size).toBe(6);
      await subscription.close();
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
