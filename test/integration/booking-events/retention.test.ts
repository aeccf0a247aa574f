import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { print } from 'graphql';
import { PRUNE_BOOKING_EVENTS_TASK } from '../../../src/modules/booking-events/index.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../../factories/webhook-receiver.js';
import { BookingChangesDocument, BookingEventsDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const T0 = new Date('2033-03-01T12:00:00Z');
const DAY = 86_400_000;
const RETENTION_DAYS = 30;

/**
 * BOOKING_EVENTS_RETENTION_DAYS: the hourly job deletes older events with their deliveries, keeps those
 * a delivery is pending for, and a cursor from before what is kept answers cursor_expired everywhere.
 */
describe('booking event retention', () => {
  let t: TestApp;
  const clock = new TestClock(T0);
  let delivered: WebhookReceiver;
  let failing: WebhookReceiver;
  let parent: AgentWithToken;
  let gone: AgentWithToken;
  let kept: AgentWithToken;
  let quiet: AgentWithToken;
  let hour = 0;

  beforeAll(async () => {
    // Failed deliveries are retried after an hour: the failing endpoint's delivery stays pending.
    t = await startTestApp({ clock, env: { BOOKING_EVENTS_RETENTION_DAYS: String(RETENTION_DAYS), WEBHOOK_RETRY_BASE_MS: '3600000' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    delivered = await startWebhookReceiver(() => 204);
    failing = await startWebhookReceiver(() => 500);
    const root = await bootstrapAgent(t);
    parent = await createAgent(t, root);
    [gone, kept, quiet] = [await createAgent(t, parent), await createAgent(t, parent), await createAgent(t, parent)];
    for (const [agent, receiver] of [[gone, delivered], [kept, failing]] as const) {
      const response = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: receiver.url } });
      expect(response.statusCode).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
    await delivered.close();
    await failing.close();
  });

  const book = (agent: AgentWithToken) => {
    const slot = hourSlot('2034-01-01T00:00:00Z', hour++);
    return createBooking(t, agent, slot.startsAt, slot.endsAt);
  };
  const feed = (agent: AgentWithToken, query: Record<string, string>) =>
    t.rest({ method: 'GET', url: `/api/bookings/changes?${new URLSearchParams(query)}`, headers: bearer(agent.token) });
  const cursors = async (agent: AgentWithToken) => (await t.query<{ id: string }>('select id::text as id from booking_events where agent_id = $1 order by id', [agent.id])).map((row) => row.id);
  /** Runs the retention job through the job queue, as its hourly crontab line does, and waits for it. */
  const runRetention = async () => {
    const [job] = await t.query<{ id: string }>(`select id::text as id from graphile_worker.add_job($1)`, [PRUNE_BOOKING_EVENTS_TASK]);
    await eventually(async () => ((await t.query('select 1 from graphile_worker.jobs where id = $1', [job!.id])).length === 0 ? true : undefined));
  };

  it('is registered to run every hour', async () => {
    const known = await t.query<{ identifier: string }>('select identifier from graphile_worker._private_known_crontabs');
    expect(known.map((row) => row.identifier)).toContain(PRUNE_BOOKING_EVENTS_TASK);
  });

  it('deletes what is older than the retention with its deliveries, keeps what a delivery still waits for, and expires only the cursors it must', async () => {
    await book(gone);
    await book(gone);
    await book(kept);
    const [goneFirst, goneLast] = await cursors(gone);
    const [keptOnly] = await cursors(kept);
    // The gone agent's deliveries arrive; the kept agent's first attempt fails and waits an hour.
    await delivered.waitFor(2);
    await eventually(async () => ((await t.query("select 1 from webhook_deliveries d join booking_events e on e.id = d.event_id where e.agent_id = $1 and d.attempts = 1 and d.status = 'pending'", [kept.id])).length ? true : undefined));

    // One day short of the retention: nothing goes.
    clock.set(new Date(T0.getTime() + (RETENTION_DAYS - 1) * DAY));
    await runRetention();
    expect([await cursors(gone), await cursors(kept)]).toEqual([[goneFirst, goneLast], [keptOnly]]);

    const oldDeliveries = (await t.query<{ id: string }>('select d.id from webhook_deliveries d where d.event_id = any ($1::bigint[])', [[goneFirst, goneLast]])).map((row) => row.id);
    const attemptsOf = async (ids: string[]) => (await t.query<{ n: number }>('select count(*)::int as n from webhook_attempts a where a.delivery_id = any ($1::uuid[])', [ids]))[0]!.n;
    expect(oldDeliveries).toHaveLength(2);
    expect(await attemptsOf(oldDeliveries)).toBe(2);

    clock.set(new Date(T0.getTime() + (RETENTION_DAYS + 1) * DAY));
    await book(gone);
    const [goneNew] = (await cursors(gone)).slice(-1);
    await runRetention();

    expect(await cursors(gone)).toEqual([goneNew]);
    expect(await cursors(kept)).toEqual([keptOnly]);
    expect(await t.query('select agent_id, through::text as through from booking_events_pruned order by agent_id')).toEqual([{ agent_id: gone.id, through: goneLast }]);
    const deliveries = await t.query<{ agent_id: string; status: string }>(
      'select e.agent_id, d.status from webhook_deliveries d join booking_events e on e.id = d.event_id order by e.id',
    );
    expect(deliveries.filter((row) => row.agent_id === kept.id).map((row) => row.status)).toEqual(['pending']);
    // The deleted events' deliveries and their attempts went with them.
    expect(await t.query('select 1 from webhook_deliveries d where d.id = any ($1::uuid[])', [oldDeliveries])).toEqual([]);
    expect(await attemptsOf(oldDeliveries)).toBe(0);

    // A cursor before what was deleted: 410 with what to do, in every adapter.
    for (const since of [goneFirst!, '0']) {
      const answer = await feed(gone, { since });
      expect(answer.statusCode).toBe(410);
      expect(answer.json()).toEqual({ error: 'cursor_expired', message: expect.stringContaining(`kept ${RETENTION_DAYS} days`) });
      expect(answer.json<{ message: string }>().message).toContain('GET /api/bookings');
    }
    const graphql = await t.gql(BookingChangesDocument, { since: goneFirst }, bearer(gone.token));
    expect(graphql.errors?.[0]?.extensions?.code).toBe('cursor_expired');
    const mcp = await connectMcp(t, bearer(gone.token));
    try {
      expect(await callTool(mcp, 'booking_changes', { since: goneFirst })).toMatchObject({ isError: true, body: { error: 'cursor_expired' } });
    } finally {
      await mcp.close();
    }
    const family = await feed(parent, { since: goneFirst!, family: 'true' });
    expect([family.statusCode, family.json<{ error: string }>().error]).toEqual([410, 'cursor_expired']);

    // A client that had seen everything before the deletion lost nothing: its cursor still works.
    const resumed = await feed(gone, { since: goneLast! });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json<{ changes: { cursor: string }[] }>().changes.map((change) => change.cursor)).toEqual([goneNew]);
    // Nothing of the kept agent's or the quiet agent's was deleted: their cursors never expire.
    expect((await feed(kept, { since: '0' })).json<{ changes: { cursor: string }[] }>().changes.map((change) => change.cursor)).toEqual([keptOnly]);
    expect((await feed(quiet, { since: '0' })).statusCode).toBe(200);
  });

  it('refuses a subscription that would replay from before what is kept', async () => {
    const { through } = (await t.query<{ through: string }>('select through::text as through from booking_events_pruned where agent_id = $1', [gone.id]))[0]!;
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const client = createClient({ url: `ws://127.0.0.1:${address.port}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${gone.token}` }, retryAttempts: 0 });
    try {
      const outcome = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: print(BookingEventsDocument), variables: { after: String(BigInt(through) - 1n) } },
          { next: (value) => resolve(value), error: (error) => resolve(error), complete: () => resolve('complete') },
        );
      });
      expect(outcome).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'cursor_expired' }, message: expect.stringContaining('no longer kept') })] });
    } finally {
      await client.dispose();
    }
  });
});
