import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import createClient from 'openapi-fetch';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { CHANGE_FEED_LIMITS } from '../../../src/modules/booking-events/index.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../../factories/webhook-receiver.js';
import { BookingChangeOwnersDocument, BookingChangesDocument } from '../../generated/graphql.js';
import type { paths } from '../../generated/openapi.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

type FeedPage = paths['/api/bookings/changes']['get']['responses'][200]['content']['application/json'];
type FeedQuery = NonNullable<paths['/api/bookings/changes']['get']['parameters']['query']>;

const BASE = '2034-01-01T00:00:00Z';

describe('the change feed', () => {
  let t: TestApp;
  let api: ReturnType<typeof createClient<paths>>;
  let root: AgentWithToken;
  let hour = 0;
  const mcpClients: McpClient[] = [];

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    api = createClient<paths>({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    root = await bootstrapAgent(t);
  });
  afterAll(async () => {
    await Promise.all(mcpClients.map((client) => client.close()));
    await t.close();
  });

  const book = (agent: AgentWithToken) => {
    const slot = hourSlot(BASE, hour++);
    return createBooking(t, agent, slot.startsAt, slot.endsAt);
  };
  const cancel = async (agent: AgentWithToken, bookingId: string) => {
    expect((await t.rest({ method: 'DELETE', url: `/api/bookings/${bookingId}`, headers: bearer(agent.token) })).statusCode).toBe(204);
  };
  /** `proposer` asks for `owner`'s booking and gets it: a transfer. */
  const transfer = async (owner: AgentWithToken, proposer: AgentWithToken, booking: { startsAt: string; endsAt: string }) => {
    const proposal = await t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(proposer.token), payload: { targetAgentId: owner.id, startsAt: booking.startsAt, endsAt: booking.endsAt } });
    expect(proposal.statusCode).toBe(201);
    const accepted = await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.json<{ id: string }>().id}/accept`, headers: bearer(owner.token) });
    expect(accepted.statusCode).toBe(200);
  };
  const changes = async (agent: AgentWithToken, query: FeedQuery) => {
    const result = await api.GET('/api/bookings/changes', { params: { query }, headers: bearer(agent.token) });
    return { status: result.response.status, data: result.data, error: result.error as { error?: string; message?: string; errors?: Record<string, string> } | undefined };
  };
  const page = async (agent: AgentWithToken, query: FeedQuery): Promise<FeedPage> => {
    const answer = await changes(agent, query);
    if (answer.status !== 200 || !answer.data) throw new Error(`${answer.status} ${JSON.stringify(answer.error)}`);
    return answer.data;
  };
  const mcp = async (agent: AgentWithToken) => {
    const client = await connectMcp(t, bearer(agent.token));
    mcpClients.push(client);
    return client;
  };

  describe('one agent', () => {
    it('answers every change after since in commit order, each with the booking as it is now or a tombstone', async () => {
      const [owner, buyer] = [await createAgent(t, root), await createAgent(t, root)];
      const head = await page(owner, {});
      expect(head).toEqual({ changes: [], nextSince: '0', hasMore: false });

      const kept = await book(owner);
      const cancelled = await book(owner);
      await cancel(owner, cancelled.id);
      const sold = await book(owner);
      await transfer(owner, buyer, sold);

      const { changes: got, nextSince, hasMore } = await page(owner, { since: head.nextSince });
      expect(got.map((change) => [change.type, change.booking?.id ?? change.deleted?.id])).toEqual([
        ['booking.created', kept.id],
        ['booking.created', cancelled.id],
        ['booking.cancelled', cancelled.id],
        ['booking.created', sold.id],
        ['booking.transferred', sold.id],
      ]);
      // As it is now: the cancelled booking's creation already shows it cancelled; the sold one is gone from this calendar.
      expect(got[1]!.booking).toEqual({ ...cancelled, agentId: owner.id, status: 'cancelled', rrule: null, warningSentAt: null, createdAt: expect.any(String), version: 2 });
      expect(got[0]!.booking).toMatchObject({ id: kept.id, agentId: owner.id, status: 'confirmed' });
      expect(got.slice(3).map((change) => [change.booking, change.deleted])).toEqual([
        [null, { id: sold.id, reason: 'transferred' }],
        [null, { id: sold.id, reason: 'transferred' }],
      ]);
      const cursors = got.map((change) => BigInt(change.cursor));
      expect([...cursors].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(cursors);
      expect(nextSince).toBe(got.at(-1)!.cursor);
      expect(hasMore).toBe(false);
      expect(got.every((change) => change.agentId === owner.id && !Number.isNaN(Date.parse(change.occurredAt)))).toBe(true);

      // The buyer's feed has the same booking, created on its calendar, as it is now.
      const bought = await page(buyer, { since: '0' });
      expect(bought.changes.map((change) => [change.type, change.booking?.id, change.booking?.agentId])).toEqual([['booking.created', sold.id, buyer.id]]);

      // Nothing new: the same nextSince back.
      expect(await page(owner, { since: nextSince })).toEqual({ changes: [], nextSince, hasMore: false });
      // The head now is the last change.
      expect((await page(owner, {})).nextSince).toBe(nextSince);
    });

    it('pages with limit: hasMore until the last page, and pages that join up exactly', async () => {
      const agent = await createAgent(t, root);
      for (let i = 0; i < 7; i++) await book(agent);
      const seen: string[] = [];
      const pages: number[] = [];
      for (let since = '0'; ; ) {
        const next = await page(agent, { since, limit: 3 });
        seen.push(...next.changes.map((change) => change.cursor));
        pages.push(next.changes.length);
        since = next.nextSince;
        if (!next.hasMore) break;
      }
      // 7 changes in pages of 3: the third page is not full; a full last page would say hasMore once more.
      expect(pages).toEqual([3, 3, 1]);
      expect(new Set(seen).size).toBe(7);
      expect((await page(agent, { since: '0', limit: 7 })).hasMore).toBe(false);
      expect((await page(agent, { since: '0', limit: 6 })).hasMore).toBe(true);
    });

    it('answers the same page in REST, GraphQL and MCP', async () => {
      const agent = await createAgent(t, root);
      const booking = await book(agent);
      await cancel(agent, booking.id);
      const rest = await page(agent, { since: '0', limit: 10 });

      const graphql = await t.gql(BookingChangesDocument, { since: '0', first: 10 }, bearer(agent.token));
      expect(graphql.errors).toBeUndefined();
      expect(graphql.data!.bookingChanges).toEqual(rest);

      const tool = await callTool(await mcp(agent), 'booking_changes', { since: '0', limit: 10 });
      expect(tool.isError).toBe(false);
      expect(tool.body).toEqual(rest);
    });

    it('holds any event type the log holds, not only the four it started with', async () => {
      const agent = await createAgent(t, root);
      const booking = await book(agent);
      const since = (await page(agent, {})).nextSince;
      // The scheduler's events (holds, reschedules) are written by the same function with new types; the
      // check constraint of this test's own database is lifted so that a type this build does not know exists.
      await t.query('alter table booking_events drop constraint booking_events_type_check');
      const { event_id: eventId } = (await t.query<{ event_id: string }>(
        `select record_booking_event($1, 'booking.held', b, now()) ->> 'eventId' as event_id from bookings b where b.id = $2`,
        [agent.id, booking.id],
      ))[0]!;
      const answer = await page(agent, { since });
      expect(answer.changes.map((change) => [change.cursor, change.type, change.booking?.id])).toEqual([[eventId, 'booking.held', booking.id]]);
    });
  });

  describe('bad input', () => {
    it.each([
      ['a since that is not a cursor', { since: 'abc' }, 'since'],
      ['a since with a sign', { since: '-1' }, 'since'],
      ['a since of 19 digits', { since: '1234567890123456789' }, 'since'],
      ['limit 0', { since: '0', limit: 0 }, 'limit'],
      [`limit ${CHANGE_FEED_LIMITS.pageMax + 1}`, { since: '0', limit: CHANGE_FEED_LIMITS.pageMax + 1 }, 'limit'],
    ])('answers 400 naming the field for %s', async (_label, query, field) => {
      const answer = await t.rest({ method: 'GET', url: `/api/bookings/changes?${new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)]))}`, headers: bearer(root.token) });
      expect(answer.statusCode).toBe(400);
      expect(Object.keys(answer.json<{ errors: Record<string, string> }>().errors)).toEqual([field]);
    });

    it(`takes limit ${CHANGE_FEED_LIMITS.pageMax}`, async () => {
      expect((await changes(root, { since: '0', limit: CHANGE_FEED_LIMITS.pageMax })).status).toBe(200);
    });

    it('answers 400 for a cursor this server never handed out, in every adapter', async () => {
      const { next } = (await t.query<{ next: string }>('select (last_value + 1000)::text as next from booking_events_id_seq'))[0]!;
      const rest = await changes(root, { since: next });
      expect(rest.status).toBe(400);
      expect(rest.error?.errors).toEqual({ since: expect.stringContaining('not a cursor this server handed out') });
      const graphql = await t.gql(BookingChangesDocument, { since: next }, bearer(root.token));
      expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'validation', errors: { since: expect.any(String) } });
      const tool = await callTool(await mcp(root), 'booking_changes', { since: next });
      expect(tool).toMatchObject({ isError: true, body: { errors: { since: expect.any(String) } } });
    });

    it('answers 400 when family and agentId come together', async () => {
      const child = await createAgent(t, root);
      const answer = await changes(root, { since: '0', family: true, agentId: child.id });
      expect(answer.status).toBe(400);
      expect(Object.keys(answer.error?.errors ?? {})).toEqual(['family']);
    });

    it('needs an agent credential', async () => {
      const answer = await t.rest({ method: 'GET', url: '/api/bookings/changes?since=0' });
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toMatchObject({ error: 'unauthorized' });
    });
  });

  describe('whose feed', () => {
    it("lets a parent read its child's feed, and nobody else another agent's", async () => {
      const parent = await createAgent(t, root);
      const [child, sibling] = [await createAgent(t, parent), await createAgent(t, parent)];
      const booking = await book(child);

      const byParent = await page(parent, { since: '0', agentId: child.id });
      expect(byParent.changes.map((change) => [change.type, change.booking?.id, change.agentId])).toEqual([['booking.created', booking.id, child.id]]);
      expect(await page(child, { since: '0', agentId: child.id })).toEqual(byParent);

      for (const [label, caller, agentId, status] of [
        ['a child reading its parent', child, parent.id, 403],
        ['a sibling', sibling, child.id, 403],
        ['a grandparent', root, child.id, 403],
        ['an unknown agent', parent, '00000000-0000-4000-8000-000000000000', 404],
        ['an id that is no UUID', parent, 'not-an-agent', 404],
      ] as const) {
        const answer = await changes(caller, { since: '0', agentId });
        expect([label, answer.status, answer.error?.error]).toEqual([label, status, status === 403 ? 'forbidden' : 'not_found']);
        expect(JSON.stringify(answer.error)).not.toContain(booking.id);
      }
      const graphql = await t.gql(BookingChangesDocument, { since: '0', agentId: child.id }, bearer(sibling.token));
      expect(graphql.errors?.[0]?.extensions?.code).toBe('forbidden');
    });

    it("reads a family's feed (the caller's and its children's) in one cursor order", async () => {
      const parent = await createAgent(t, root);
      const [first, second] = [await createAgent(t, parent), await createAgent(t, parent)];
      const grandchild = await createAgent(t, first);
      const written = [await book(first), await book(parent), await book(second), await book(grandchild), await book(first)];
      const family = await page(parent, { since: '0', family: true });
      // The grandchild's feed is its parent's to read, not its grandparent's.
      expect(family.changes.map((change) => [change.agentId, change.booking?.id])).toEqual([
        [first.id, written[0]!.id],
        [parent.id, written[1]!.id],
        [second.id, written[2]!.id],
        [first.id, written[4]!.id],
      ]);
      // Its head is the newest of its members' cursors.
      expect((await page(parent, { family: true })).nextSince).toBe(family.nextSince);
    });

    it("answers each booking of a family's feed with its owner, the children's read in one statement", async () => {
      const parent = await createAgent(t, root, 'owners-parent');
      const children = [await createAgent(t, parent, 'owners-a'), await createAgent(t, parent, 'owners-b'), await createAgent(t, parent, 'owners-c')];
      for (const owner of [parent, ...children, ...children]) await book(owner);
      t.sql.reset();
      const answer = await t.gql(BookingChangeOwnersDocument, { since: '0', family: true }, bearer(parent.token));
      expect(answer.errors).toBeUndefined();
      const changes = answer.data!.bookingChanges.changes;
      expect(changes).toHaveLength(7);
      const names = new Map([parent, ...children].map((agent, i) => [agent.id, ['owners-parent', 'owners-a', 'owners-b', 'owners-c'][i]]));
      expect(changes.map((change) => change.booking?.agent)).toEqual(changes.map((change) => ({ id: change.agentId, name: names.get(change.agentId) })));
      // The caller is known to the operation's loader; its three children come in one batch.
      expect(t.sql.statements.filter((sql) => /\bfrom agents\b/.test(sql) && !/token_hash = \$1/.test(sql))).toHaveLength(1);
    });

    it(`reads a family of ${CHANGE_FEED_LIMITS.familyMaxAgents} agents, and refuses one more with limit_exceeded`, async () => {
      const parent = await createAgent(t, root);
      for (let i = 0; i < CHANGE_FEED_LIMITS.familyMaxAgents - 2; i++) await createAgent(t, parent);
      const last = await createAgent(t, parent);
      await book(last);
      const full = await page(parent, { since: '0', family: true });
      expect(full.changes.map((change) => change.agentId)).toEqual([last.id]);

      await createAgent(t, parent);
      const over = await changes(parent, { since: '0', family: true });
      expect(over.status).toBe(409);
      expect(over.error).toEqual({ error: 'limit_exceeded', message: expect.stringContaining(`this family has ${CHANGE_FEED_LIMITS.familyMaxAgents + 1}`) });
      // A child's own feed stays readable.
      expect((await page(parent, { since: '0', agentId: last.id })).changes).toHaveLength(1);
    });
  });

  describe('the route', () => {
    it('does not take the place of a booking id: the booking routes beside it still answer', async () => {
      const agent = await createAgent(t, root);
      const booking = await book(agent);
      expect((await t.rest({ method: 'GET', url: `/api/bookings/${booking.id}/occurrences`, headers: bearer(agent.token) })).statusCode).toBe(200);
      const cancelChanges = await t.rest({ method: 'DELETE', url: '/api/bookings/changes', headers: bearer(agent.token) });
      expect(cancelChanges.statusCode).toBe(404);
      expect((await changes(agent, { since: '0' })).status).toBe(200);
    });
  });

  describe('webhook deliveries', () => {
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
    });
    afterAll(() => receiver.close());

    it("carry their event's cursor and the cursor of the endpoint's previous event, which the feed follows from", async () => {
      // A second app on the same database runs the dispatcher (this one runs no jobs).
      const dispatcher = await startTestApp({ databaseUrl: t.databaseUrl });
      try {
        const agent = await createAgent(t, root);
        const register = async (events?: string[]) => {
          const response = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: `${receiver.url}`, ...(events ? { events } : {}) } });
          expect(response.statusCode).toBe(201);
          return response.json<{ id: string; secret: string }>();
        };
        const all = await register();
        const cancels = await register(['booking.cancelled']);
        const first = await book(agent);
        await cancel(agent, first.id);
        const second = await book(agent);
        await cancel(agent, second.id);

        const received = await receiver.waitFor(6);
        const feed = await page(agent, { since: '0' });
        const cursors = feed.changes.map((change) => change.cursor);
        expect(feed.changes.map((change) => change.type)).toEqual(['booking.created', 'booking.cancelled', 'booking.created', 'booking.cancelled']);

        const deliveriesOf = async (webhookId: string) =>
          (await t.query<{ n: number }>('select count(*)::int as n from webhook_deliveries d where d.webhook_id = $1', [webhookId]))[0]!.n;
        // A delivery's row is written with its outcome, after the receiver answered.
        const counts = await eventually(async () => {
          const found = [await deliveriesOf(all.id), await deliveriesOf(cancels.id)];
          return found[0]! >= 4 && found[1]! >= 2 ? found : undefined;
        });
        expect(counts).toEqual([4, 2]);

        // Each endpoint's deliveries: the body's id is evt_<webhook-cursor>, signed; the previous cursor is
        // the endpoint's previous event (for the cancellations-only endpoint, the previous cancellation).
        const seen = new Map<string, { cursor: string; previous: string | undefined }[]>();
        for (const delivery of received) {
          const cursor = String(delivery.headers['webhook-cursor']);
          expect(delivery.json.id).toBe(`evt_${cursor}`);
          const secretOf = [all, cancels].find((webhook) => {
            try {
              new StandardWebhook(webhook.secret).verify(delivery.body, {
                'webhook-id': String(delivery.headers['webhook-id']),
                'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
                'webhook-signature': String(delivery.headers['webhook-signature']),
              });
              return true;
            } catch {
              return false;
            }
          });
          expect(secretOf).toBeDefined();
          const list = seen.get(secretOf!.id) ?? [];
          list.push({ cursor, previous: delivery.headers['webhook-previous-cursor'] as string | undefined });
          seen.set(secretOf!.id, list);
        }
        const ordered = (list: { cursor: string; previous: string | undefined }[]) => [...list].sort((a, b) => Number(BigInt(a.cursor) - BigInt(b.cursor)));
        expect(ordered(seen.get(all.id)!)).toEqual([
          { cursor: cursors[0], previous: undefined },
          { cursor: cursors[1], previous: cursors[0] },
          { cursor: cursors[2], previous: cursors[1] },
          { cursor: cursors[3], previous: cursors[2] },
        ]);
        expect(ordered(seen.get(cancels.id)!)).toEqual([
          { cursor: cursors[1], previous: undefined },
          { cursor: cursors[3], previous: cursors[1] },
        ]);
        // A receiver that missed the third delivery but got the fourth reads exactly the one it missed.
        const missed = await page(agent, { since: cursors[1]! });
        expect(missed.changes.map((change) => change.cursor)).toEqual([cursors[2], cursors[3]]);
      } finally {
        await dispatcher.close();
      }
    });
  });
});
