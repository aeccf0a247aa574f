import pg from 'pg';
import { createLogger } from '../../../src/platform/logger.js';
import { NOTIFICATIONS_APPLICATION_NAME, Notifications } from '../../../src/platform/db/notifications.js';
import { bearer, createTestDatabase, startTestApp, type TestApp } from '../../harness.js';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { postBooking } from '../../factories/bookings.js';
import { startFreezableProxy, type FreezableProxy } from '../../factories/freezable-proxy.js';

/**
 * PostgreSQL that stops answering, as a frozen server or a black-holed network leaves it: every
 * connection stays open and nothing comes back. Between the gateway and its database sits a TCP proxy
 * that holds every byte while frozen.
 */
const TIMEOUTS = { DB_CONNECT_TIMEOUT_MS: '1000', DB_STATEMENT_TIMEOUT_MS: '1000', DB_LOCK_TIMEOUT_MS: '1000' };
/** The slowest way to find out: a query on an open connection, cut off 2 s after the statement timeout. */
const FAIL_WITHIN_MS = 1000 + 2000 + 1500;

async function directQuery<Row>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end();
  }
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

describe('a database that stops answering', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let proxy: FreezableProxy;
  let t: TestApp;
  let agent: AgentWithToken;
  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await startFreezableProxy(database.url);
    t = await startTestApp({ databaseUrl: proxy.url, env: TIMEOUTS, jobs: false });
    agent = await bootstrapAgent(t);
    expect((await postBooking(t, agent, { startsAt: '2033-01-10T09:00:00Z', endsAt: '2033-01-10T10:00:00Z' })).statusCode).toBe(201);
  });

  afterAll(async () => {
    proxy.thaw();
    await t.close();
    await proxy.close();
    await database.drop();
  });

  it('answers 503 unavailable within a bound on every surface, writes nothing, and serves again by itself', async () => {
    proxy.freeze();

    const timed = async <T>(request: () => Promise<T>) => {
      const started = Date.now();
      const result = await request();
      return { result, ms: Date.now() - started };
    };
    const list = await timed(() => t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) }));
    expect(list.result.statusCode).toBe(503);
    expect(list.result.json()).toEqual({ error: 'unavailable', message: expect.any(String) });
    expect(list.result.headers['retry-after']).toBe('5');
    expect(list.ms).toBeLessThan(FAIL_WITHIN_MS);

    const create = await timed(() => postBooking(t, agent, { startsAt: '2033-01-11T09:00:00Z', endsAt: '2033-01-11T10:00:00Z' }));
    expect(create.result.statusCode).toBe(503);
    expect(create.ms).toBeLessThan(FAIL_WITHIN_MS);

    const graphql = await timed(() =>
      t.rest({
        method: 'POST',
        url: '/graphql',
        headers: { ...bearer(agent.token), 'content-type': 'application/json' },
        payload: { query: '{ bookings(from: "2033-01-01T00:00:00Z", to: "2033-02-01T00:00:00Z") { edges { node { id } } } }' },
      }),
    );
    expect(graphql.result.json().errors[0].extensions.code).toBe('unavailable');
    expect(graphql.ms).toBeLessThan(FAIL_WITHIN_MS);

    const ready = await timed(() => t.rest({ method: 'GET', url: '/readyz' }));
    expect(ready.result.statusCode).toBe(503);
    expect(ready.ms).toBeLessThan(1500);
    expect((await t.rest({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    proxy.thaw();
    await waitUntil(async () => (await t.rest({ method: 'GET', url: '/readyz' })).statusCode === 200, 10_000);
    const after = await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) });
    expect(after.statusCode).toBe(200);
    // The refused create left nothing behind: one booking, one slot, one event.
    const [counts] = await directQuery<{ bookings: number; slots: number; events: number }>(
      database.url,
      'select (select count(*)::int from bookings) as bookings, (select count(*)::int from booking_slots) as slots, (select count(*)::int from booking_events) as events',
    );
    expect(counts).toEqual({ bookings: 1, slots: 1, events: 1 });
    expect((await postBooking(t, agent, { startsAt: '2033-01-12T09:00:00Z', endsAt: '2033-01-12T10:00:00Z' })).statusCode).toBe(201);
  });
});

describe('a database that stops under load and starts again', () => {
  it('answers 503 and never 500 meanwhile, keeps every 201 whole, and serves again without a restart', async () => {
    const database = await createTestDatabase();
    const proxy = await startFreezableProxy(database.url);
    const t = await startTestApp({ databaseUrl: proxy.url, env: TIMEOUTS, jobs: false });
    try {
      const agent = await bootstrapAgent(t);
      const statuses = new Map<number, number>();
      const created: string[] = [];
      let hour = 0;
      let running = true;
      let restarted = false;
      let createdAfterRestart = 0;
      const load = Array.from({ length: 6 }, async (_, client) => {
        while (running) {
          const startsAt = new Date(Date.UTC(2035, 0, 1) + hour++ * 3_600_000);
          const response =
            client % 2 === 0
              ? await postBooking(t, agent, { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() })
              : await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) });
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          if (response.statusCode === 201) {
            created.push(response.json().id);
            if (restarted) createdAfterRestart++;
          }
          if (response.statusCode === 503) await new Promise((resolve) => setTimeout(resolve, 50));
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await proxy.refuse();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await proxy.accept();
      restarted = true;
      const recoveredMs = await waitUntil(async () => createdAfterRestart >= 5, 10_000);
      running = false;
      await Promise.all(load);

      expect([...statuses.keys()].sort()).toEqual([200, 201, 503]);
      expect(recoveredMs).toBeLessThan(10_000);
      const [{ whole }] = (await directQuery<{ whole: number }>(
        database.url,
        `select count(*)::int as whole from bookings b
          where exists (select 1 from booking_slots s where s.booking_id = b.id) and exists (select 1 from booking_events e where e.booking_id = b.id)`,
      )) as [{ whole: number }];
      const [{ all, answered }] = (await directQuery<{ all: number; answered: number }>(
        database.url,
        'select count(*)::int as "all", count(*) filter (where id = any($1::uuid[]))::int as answered from bookings',
        [created],
      )) as [{ all: number; answered: number }];
      // Every 201 is stored, and nothing is half-written (a create cut off by the outage may have
      // committed without its answer: such a booking is whole, and a retry with its Idempotency-Key finds it).
      expect(answered).toBe(created.length);
      expect(all).toBe(whole);
    } finally {
      await t.close();
      await proxy.close();
      await database.drop();
    }
  });
});

describe('a LISTEN connection that stops answering', () => {
  it('is replaced after a missed heartbeat, by one reconnect, and notifications arrive again', async () => {
    const database = await createTestDatabase();
    const proxy = await startFreezableProxy(database.url);
    // A timeout well above any pause of a loaded test worker, so that only the frozen connection misses it.
    const timing = { heartbeatIntervalMs: 300, heartbeatTimeoutMs: 1500, reconnectDelayMs: 100 };
    const notifications = new Notifications(
      proxy.url,
      { connectMs: 1000, statementMs: 1000, lockMs: 1000, idleInTransactionMs: 10_000 },
      createLogger('silent'),
      timing,
    );
    const received: string[] = [];
    let reconnects = 0;
    notifications.on('fault_test', (payload) => received.push(payload));
    notifications.onReconnect(() => reconnects++);
    const listeners = async () =>
      (
        await directQuery<{ n: number }>(
          database.url,
          `select count(*)::int as n from pg_stat_activity where application_name = '${NOTIFICATIONS_APPLICATION_NAME}' and datname = current_database()`,
        )
      )[0]!.n;
    const notify = (payload: string) => directQuery(database.url, `select pg_notify('fault_test', '${payload}')`);
    try {
      await notifications.start();
      await notify('before');
      await waitUntil(async () => received.includes('before'), 2000);

      // Only the LISTEN connection freezes; the database itself keeps answering everyone else.
      proxy.freeze((connection) => connection.startup.includes(NOTIFICATIONS_APPLICATION_NAME));
      await notify('while-frozen');
      // Heartbeat interval + its timeout + the reconnect pause, with room for a slow machine.
      const bound = timing.heartbeatIntervalMs + timing.heartbeatTimeoutMs + timing.reconnectDelayMs + 2000;
      await waitUntil(async () => reconnects >= 1, bound);
      await notify('after');
      await waitUntil(async () => received.includes('after'), 2000);
      // What was sent to the frozen connection is gone (listeners re-read state on reconnect instead).
      expect(received).toEqual(['before', 'after']);
      // One reconnect loop: however often it had to reconnect, a single LISTEN connection is left.
      await new Promise((resolve) => setTimeout(resolve, 5 * timing.heartbeatIntervalMs));
      expect(await listeners()).toBe(1);
    } finally {
      await notifications.stop();
      await proxy.close();
      await database.drop();
    }
  });
});
