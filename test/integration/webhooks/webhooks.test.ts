import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { MAX_WEBHOOKS_PER_AGENT } from '../../../src/modules/webhooks/sql/webhooks-per-agent-limit.trigger.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { TestClock } from '../../factories/clock.js';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../../factories/webhook-receiver.js';
import {
  DisableWebhookDocument,
  EnableWebhookDocument,
  RedeliverWebhookDocument,
  RegisterWebhookDocument,
  WebhookDeliveriesDocument,
  WebhooksDocument,
} from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const FAST_RETRIES = { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_DISABLE_AFTER: '2' };

describe('webhooks', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let slot = 0;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: FAST_RETRIES });
    root = await bootstrapAgent(t);
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });
  afterAll(() => t.close());

  const receiver = async (respond?: (hit: number) => number | 'hang') => {
    const started = await startWebhookReceiver(respond);
    receivers.push(started);
    return started;
  };

  const register = async (agent: AgentWithToken, url: string, events?: string[]) =>
    t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url, ...(events ? { events } : {}) } });

  const book = (agent: AgentWithToken) => {
    const start = new Date(Date.UTC(2032, 0, 1, 9) + slot++ * 86_400_000);
    return createBooking(t, agent, start.toISOString(), new Date(start.getTime() + 3_600_000).toISOString());
  };

  const deliveries = async (agent: AgentWithToken, webhookId: string) =>
    (await t.gql(WebhookDeliveriesDocument, { webhookId }, bearer(agent.token))).data!.webhookDeliveries;

  describe('registration', () => {
    it('answers 201 with the secret once, all events by default, and lists only the caller’s', async () => {
      const [agent, other] = [await createAgent(t, root), await createAgent(t, root)];
      const hook = await receiver();
      const response = await register(agent, hook.url);
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toEqual({
        id: expect.any(String),
        url: hook.url,
        events: ['booking.created', 'booking.cancelled', 'booking.transferred', 'booking.reminder', 'booking.rescheduled'],
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
        created_at: expect.any(String),
        disabled_at: null,
      });
      const listed = (await t.rest({ method: 'GET', url: '/api/webhooks', headers: bearer(agent.token) })).json();
      expect(listed.items.map((item: { id: string }) => item.id)).toEqual([body.id]);
      expect(JSON.stringify(listed)).not.toContain(body.secret);
      expect((await t.rest({ method: 'GET', url: '/api/webhooks', headers: bearer(other.token) })).json()).toEqual({ items: [] });
      expect((await t.rest({ method: 'DELETE', url: `/api/webhooks/${body.id}`, headers: bearer(other.token) })).statusCode).toBe(403);
      expect((await t.rest({ method: 'DELETE', url: `/api/webhooks/${body.id}`, headers: bearer(agent.token) })).statusCode).toBe(204);
      expect((await t.rest({ method: 'DELETE', url: `/api/webhooks/${body.id}`, headers: bearer(agent.token) })).statusCode).toBe(404);
    });

    it(`keeps ${MAX_WEBHOOKS_PER_AGENT} webhooks per agent, also when registrations race, and refuses the next with limit_exceeded`, async () => {
      const agent = await createAgent(t, root);
      const attempts = await Promise.all(
        Array.from({ length: MAX_WEBHOOKS_PER_AGENT + 5 }, (_, i) => register(agent, `http://127.0.0.1:9/hook/${i}`)),
      );
      expect(attempts.filter((r) => r.statusCode === 201)).toHaveLength(MAX_WEBHOOKS_PER_AGENT);
      const refused = attempts.filter((r) => r.statusCode !== 201);
      expect(refused.map((r) => [r.statusCode, r.json().error])).toEqual(Array.from({ length: 5 }, () => [409, 'limit_exceeded']));
      const listed = (await t.rest({ method: 'GET', url: '/api/webhooks', headers: bearer(agent.token) })).json();
      expect(listed.items).toHaveLength(MAX_WEBHOOKS_PER_AGENT);
      // Another agent's limit is its own; a deleted webhook makes room.
      expect((await register(await createAgent(t, root), 'http://127.0.0.1:9/other')).statusCode).toBe(201);
      expect((await t.rest({ method: 'DELETE', url: `/api/webhooks/${listed.items[0].id}`, headers: bearer(agent.token) })).statusCode).toBe(204);
      expect((await register(agent, 'http://127.0.0.1:9/again')).statusCode).toBe(201);
      expect((await register(agent, 'http://127.0.0.1:9/over')).statusCode).toBe(409);
    });

    it.each([
      ['not a URL', 'not a url', undefined, 'url'],
      ['an ftp URL', 'ftp://example.com/x', undefined, 'url'],
      ['an unknown event', 'http://127.0.0.1:9/x', ['booking.created', 'booking.exploded'], 'events.1'],
      ['an empty event', 'http://127.0.0.1:9/x', [''], 'events.0'],
      ['a URL with credentials', 'http://user:secret@127.0.0.1:9/x', undefined, 'url'],
      ['no events', 'http://127.0.0.1:9/x', [], 'events'],
    ])('answers 400 for %s', async (_label, url, events, field) => {
      const response = await register(root, url, events);
      expect(response.statusCode).toBe(400);
      expect(Object.keys(response.json().errors)).toEqual([field]);
    });
  });

  it('delivers booking.created to the new owner on accept, signed so standardwebhooks verifies it', async () => {
    const [proposer, target] = [await createAgent(t, root), await createAgent(t, root)];
    const hook = await receiver();
    const { secret } = (await register(proposer, hook.url)).json();
    const held = await book(target);
    const proposal = (
      await t.rest({
        method: 'POST',
        url: '/api/proposals',
        headers: bearer(proposer.token),
        payload: { targetAgentId: target.id, startsAt: held.startsAt, endsAt: held.endsAt },
      })
    ).json();
    await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.id}/accept`, headers: bearer(target.token) });

    const [message] = await hook.waitFor(1);
    const verified = new StandardWebhook(secret).verify(message!.body, {
      'webhook-id': String(message!.headers['webhook-id']),
      'webhook-timestamp': String(message!.headers['webhook-timestamp']),
      'webhook-signature': String(message!.headers['webhook-signature']),
    }) as { id: string; type: string; data: { booking: Record<string, unknown> } };
    expect(verified.type).toBe('booking.created');
    expect(verified.id).toBe(message!.headers['webhook-id']);
    // The REST item and the version (REST's ETag), raised by the transfer.
    // The seed's BookingItem, as REST answers it: the version stays out (REST gives it as the ETag).
    expect(verified.data.booking).toEqual({ ...held, agentId: proposer.id, warningSentAt: null });
    // A tampered body does not verify.
    expect(() =>
      new StandardWebhook(secret).verify(message!.body.replace(proposer.id, target.id), {
        'webhook-id': String(message!.headers['webhook-id']),
        'webhook-timestamp': String(message!.headers['webhook-timestamp']),
        'webhook-signature': String(message!.headers['webhook-signature']),
      }),
    ).toThrow();
  });

  it('sends booking.created, booking.cancelled and booking.transferred to the subscribed events only', async () => {
    const [owner, taker] = [await createAgent(t, root), await createAgent(t, root)];
    const everything = await receiver();
    const cancelledOnly = await receiver();
    await register(owner, everything.url);
    await register(owner, cancelledOnly.url, ['booking.cancelled']);
    const first = await book(owner);
    await t.rest({ method: 'DELETE', url: `/api/bookings/${first.id}`, headers: bearer(owner.token) });
    const second = await book(owner);
    const proposal = (
      await t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(taker.token), payload: { targetAgentId: owner.id, startsAt: second.startsAt, endsAt: second.endsAt } })
    ).json();
    await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.id}/accept`, headers: bearer(owner.token) });

    const received = await everything.waitFor(4);
    const byCursor = [...received].sort((a, b) => Number(a.json.id.slice(4)) - Number(b.json.id.slice(4)));
    expect(byCursor.map((message) => [message.json.type, message.json.data.booking.id])).toEqual([
      ['booking.created', first.id],
      ['booking.cancelled', first.id],
      ['booking.created', second.id],
      ['booking.transferred', second.id],
    ]);
    // The cancelled booking as the database wrote it into the event: the REST shape, status changed, and the
    // version (REST's ETag) the cancellation raised.
    expect(byCursor[1]!.json.data.booking).toEqual({ ...first, status: 'cancelled' });
    expect(byCursor[3]!.json.data.booking.agentId).toBe(taker.id);
    const onlyCancelled = await cancelledOnly.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(onlyCancelled.map((message) => message.json.type)).toEqual(['booking.cancelled']);
  });

  it('retries a failing receiver and delivers on the third attempt', async () => {
    const agent = await createAgent(t, root);
    const hook = await receiver((hit) => (hit <= 2 ? 503 : 200));
    const { id } = (await register(agent, hook.url)).json();
    await book(agent);
    await hook.waitFor(1);
    const [delivery] = await eventually(async () => {
      const found = await deliveries(agent, id);
      return found[0]?.status === 'delivered' ? found : undefined;
    });
    expect(delivery!.attempts.map((attempt) => attempt.statusCode)).toEqual([503, 503, 200]);
    expect(hook.hits).toBe(3);
  });

  it('marks a delivery failed after the last attempt, records every attempt, and disables a failing endpoint', async () => {
    const agent = await createAgent(t, root);
    const hook = await receiver(() => 500);
    const { id } = (await register(agent, hook.url)).json();
    await book(agent);
    await book(agent);
    const failed = await eventually(async () => {
      const found = await deliveries(agent, id);
      return found.length === 2 && found.every((delivery) => delivery.status === 'failed') ? found : undefined;
    });
    for (const delivery of failed) {
      expect(delivery.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3]);
      expect(delivery.attempts.every((attempt) => attempt.statusCode === 500)).toBe(true);
      expect(delivery.lastError).toMatch(/500/);
    }
    // WEBHOOK_DISABLE_AFTER=2: two failed deliveries in a row disable the endpoint, and GraphQL says so.
    const [webhook] = (await t.gql(WebhooksDocument, undefined, bearer(agent.token))).data!.webhooks;
    expect(webhook).toMatchObject({ id, enabled: false, disabledReason: expect.stringMatching(/2 deliveries in a row failed/) });
    const hitsBefore = hook.hits;
    await book(agent);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hook.hits).toBe(hitsBefore);
  });

  it('disables an endpoint by hand until enableWebhook, and refuses another agent’s', async () => {
    const agent = await createAgent(t, root);
    const hook = await receiver();
    const { id } = (await register(agent, hook.url)).json();
    const disabled = await t.gql(DisableWebhookDocument, { id }, bearer(agent.token));
    expect(disabled.data!.disableWebhook).toEqual({ id, enabled: false, disabledAt: expect.any(String), disabledReason: 'disabled by its agent' });
    const again = await t.gql(DisableWebhookDocument, { id }, bearer(agent.token));
    expect(again.data!.disableWebhook.disabledAt).toBe(disabled.data!.disableWebhook.disabledAt);

    await book(agent);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hook.hits).toBe(0);
    expect(await deliveries(agent, id)).toEqual([]);

    const enabled = await t.gql(EnableWebhookDocument, { id }, bearer(agent.token));
    expect(enabled.data!.enableWebhook).toEqual({ id, enabled: true, disabledReason: null });
    await book(agent);
    await eventually(async () => (hook.hits === 1 ? true : undefined));

    const other = await createAgent(t, root);
    const refused = await t.gql(DisableWebhookDocument, { id }, bearer(other.token));
    expect(refused.errors?.[0]?.extensions).toEqual({ code: 'forbidden' });
  });

  it('cuts off a receiver that hangs, without slowing the request that caused the event', async () => {
    const agent = await createAgent(t, root);
    const hook = await receiver(() => 'hang');
    const { id } = (await register(agent, hook.url)).json();
    const started = Date.now();
    await book(agent);
    expect(Date.now() - started).toBeLessThan(400);
    const [delivery] = await eventually(async () => {
      const found = await deliveries(agent, id);
      return found[0]?.attempts.length ? found : undefined;
    });
    expect(delivery!.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/no answer within 500 ms/) });
    expect(delivery!.attempts[0]!.durationMs).toBeGreaterThanOrEqual(450);
  });

  it('delivers to other endpoints while one receiver with a backlog hangs (no head-of-line blocking)', async () => {
    const slow = await startTestApp({ env: { ...FAST_RETRIES, WEBHOOK_TIMEOUT_MS: '8000' } });
    try {
      const owner = await bootstrapAgent(slow);
      const [stuck, healthy] = [await createAgent(slow, owner), await createAgent(slow, owner)];
      const [hanging, answering] = [await receiver(() => 'hang'), await receiver()];
      for (const [agent, hook] of [[stuck, hanging], [healthy, answering]] as const) {
        await slow.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: hook.url } });
      }
      // More deliveries to the hanging endpoint than there are places for attempts in flight.
      for (let day = 1; day <= 40; day++) {
        const start = new Date(Date.UTC(2032, 5, day, 9));
        await createBooking(slow, stuck, start.toISOString(), new Date(start.getTime() + 3_600_000).toISOString());
      }
      while (hanging.hits === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      await createBooking(slow, healthy, '2032-05-01T09:00:00Z', '2032-05-01T10:00:00Z');
      await answering.waitFor(1, 4_000);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await slow.close();
    }
  });

  it('records a batch of attempt outcomes even when one delivery is gone meanwhile', async () => {
    const quiet = await startTestApp({ jobs: false }); // no dispatcher: the delivery stays pending
    try {
      const owner = await bootstrapAgent(quiet);
      const hook = await receiver();
      await quiet.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(owner.token), payload: { url: hook.url } });
      await createBooking(quiet, owner, '2032-07-01T09:00:00Z', '2032-07-01T10:00:00Z');
      // What the dispatcher does: it claims the queued event, one delivery per endpoint.
      const [delivery] = await quiet.query<{ id: string; webhook_id: string; event_id: string; event_created_at: Date }>(
        `select id, webhook_id, event_id::text, event_created_at from claim_webhook_deliveries(now(), now() + interval '1 minute', 10, null, '{}', '{}', 4)`,
      );
      const outcome = (deliveryId: string, webhookId: string, eventId = delivery!.event_id) => ({
        delivery_id: deliveryId,
        webhook_id: webhookId,
        event_id: eventId,
        event_created_at: delivery!.event_created_at,
        attempt: 1,
        attempted_at: '2032-01-01T00:00:00Z',
        status_code: 204,
        error: null,
        duration_ms: 3,
        status: 'delivered',
        next_attempt_at: null,
        finished_at: '2032-01-01T00:00:01Z',
        completes_event: true,
      });
      // The first one's delivery was deleted with its webhook and event while its attempt was in flight.
      const gone = outcome('00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000001', '999999999');
      await quiet.query('select record_webhook_attempts($1::jsonb, 5)', [JSON.stringify([gone, outcome(delivery!.id, delivery!.webhook_id)])]);
      const [after] = await quiet.query<{ status: string; attempts: number; logged: number }>(
        'select status, attempts, (select count(*)::int from webhook_attempts a where a.delivery_id = d.id) as logged from webhook_deliveries d where id = $1',
        [delivery!.id],
      );
      expect(after).toEqual({ status: 'delivered', attempts: 1, logged: 1 });
      // The same outcome again (an attempt whose lease had lapsed) changes nothing.
      await quiet.query('select record_webhook_attempts($1::jsonb, 5)', [JSON.stringify([outcome(delivery!.id, delivery!.webhook_id)])]);
      expect((await quiet.query<{ n: number }>('select count(*)::int as n from webhook_attempts'))[0]!.n).toBe(1);
    } finally {
      await quiet.close();
    }
  });

  it('counts an endpoint’s failures in a batch in the order they finished, a success in between starting over', async () => {
    const quiet = await startTestApp({ jobs: false });
    try {
      const owner = await bootstrapAgent(quiet);
      const hook = await receiver();
      await quiet.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(owner.token), payload: { url: hook.url } });
      for (const day of ['01', '02', '03', '04']) await createBooking(quiet, owner, `2032-08-${day}T09:00:00Z`, `2032-08-${day}T10:00:00Z`);
      const pending = await quiet.query<{ id: string; webhook_id: string; event_id: string; event_created_at: Date }>(
        `select id, webhook_id, event_id::text, event_created_at from claim_webhook_deliveries(now(), now() + interval '1 minute', 10, null, '{}', '{}', 4) order by event_id`,
      );
      expect(pending).toHaveLength(4);
      const outcome = (delivery: (typeof pending)[number], status: 'delivered' | 'failed', finishedSecond: number) => ({
        delivery_id: delivery.id,
        webhook_id: delivery.webhook_id,
        event_id: delivery.event_id,
        event_created_at: delivery.event_created_at,
        attempt: 1,
        attempted_at: '2032-01-01T00:00:00Z',
        status_code: status === 'delivered' ? 204 : 500,
        error: status === 'delivered' ? null : `failure ${finishedSecond}`,
        duration_ms: 3,
        status,
        next_attempt_at: null,
        finished_at: `2032-01-01T00:00:0${finishedSecond}Z`,
        completes_event: true,
      });
      const endpoint = async () =>
        (await quiet.query<{ consecutive_failures: number; disabled_reason: string | null }>('select consecutive_failures, disabled_reason from webhooks'))[0];
      // Listed out of order: failed (1 s), delivered (2 s), failed (3 s) leaves one failure in a row, not three.
      const batch = [outcome(pending[2]!, 'failed', 3), outcome(pending[0]!, 'failed', 1), outcome(pending[1]!, 'delivered', 2)];
      await quiet.query('select record_webhook_attempts($1::jsonb, 2)', [JSON.stringify(batch)]);
      expect(await endpoint()).toEqual({ consecutive_failures: 1, disabled_reason: null });
      // The second failure in a row disables it (after 2), naming the last error.
      await quiet.query('select record_webhook_attempts($1::jsonb, 2)', [JSON.stringify([outcome(pending[3]!, 'failed', 4)])]);
      expect(await endpoint()).toEqual({ consecutive_failures: 2, disabled_reason: '2 deliveries in a row failed; last error: failure 4' });
    } finally {
      await quiet.close();
    }
  });

  it('redelivers an event as a new delivery', async () => {
    const agent = await createAgent(t, root);
    const hook = await receiver();
    const { id } = (await register(agent, hook.url, ['booking.created'])).json();
    await book(agent);
    await hook.waitFor(1);
    const [original] = await eventually(async () => {
      const found = await deliveries(agent, id);
      return found[0]?.status === 'delivered' ? found : undefined;
    });
    const redelivered = await t.gql(RedeliverWebhookDocument, { deliveryId: original!.id }, bearer(agent.token));
    expect(redelivered.data!.redeliverWebhook.id).not.toBe(original!.id);
    const both = await hook.waitFor(2);
    expect(both[1]!.headers['webhook-id']).toBe(both[0]!.headers['webhook-id']);
  });

  it('refuses loopback URLs unless WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = await startTestApp({ jobs: false, env: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
    try {
      const agent = await bootstrapAgent(strict);
      for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://[::1]/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest']) {
        const response = await strict.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url } });
        expect(response.statusCode).toBe(400);
        expect(response.json().errors.url).toMatch(/loopback, private, link-local or other non-public address/);
      }
      const viaGraphql = await strict.gql(RegisterWebhookDocument, { input: { url: 'http://127.0.0.1/x' } }, bearer(agent.token));
      expect(viaGraphql.errors?.[0]?.extensions).toMatchObject({ code: 'validation', errors: { url: expect.any(String) } });
    } finally {
      await strict.close();
    }
  });

  it('sends booking.reminder at once for a booking inside the lead window and sets warningSentAt', async () => {
    const agent = await createAgent(t, root);
    const hook = await receiver();
    await register(agent, hook.url, ['booking.reminder']);
    const startsAt = new Date(Date.now() + 5 * 60_000);
    const booking = await createBooking(t, agent, startsAt.toISOString(), new Date(startsAt.getTime() + 600_000).toISOString());
    const [message] = await hook.waitFor(1);
    expect(message!.json.type).toBe('booking.reminder');
    expect(message!.json.data.booking).toMatchObject({ id: booking.id, warningSentAt: expect.any(String) });
    const [row] = await t.query<{ warning_sent_at: Date | null }>('select warning_sent_at from bookings where id = $1', [booking.id]);
    expect(row!.warning_sent_at).toBeInstanceOf(Date);
  });
});

describe('the outbox', () => {
  it('delivers an event committed while no worker ran once a worker starts (restart)', async () => {
    const hook = await startWebhookReceiver();
    const first = await startTestApp({ jobs: false });
    let second: TestApp | undefined;
    try {
      const agent = await bootstrapAgent(first);
      await first.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: hook.url } });
      const booking = await createBooking(first, agent, '2032-06-01T09:00:00Z', '2032-06-01T10:00:00Z');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(hook.hits).toBe(0);
      // The process that committed the event goes away; a new one on the same database delivers it.
      const databaseUrl = first.databaseUrl;
      await first.app.close();
      await first.orm.close(true);
      second = await startTestApp({ databaseUrl });
      const [message] = await hook.waitFor(1);
      expect(message!.json).toMatchObject({ type: 'booking.created', data: { booking: { id: booking.id } } });
    } finally {
      await second?.app.close();
      await second?.orm.close(true);
      await first.close().catch(() => undefined);
      await hook.close();
    }
  });

  it('sends each delivery once while two processes claim from the same backlog', async () => {
    const hook = await startWebhookReceiver();
    const writer = await startTestApp({ jobs: false });
    const dispatchers: TestApp[] = [];
    try {
      const agent = await bootstrapAgent(writer);
      await writer.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: hook.url } });
      const events = 300;
      for (let i = 0; i < events; i++) {
        const start = new Date(Date.UTC(2033, 0, 1) + i * 3_600_000);
        await createBooking(writer, agent, start.toISOString(), new Date(start.getTime() + 1_800_000).toISOString());
      }
      // Two processes start on the backlog at once and claim from it side by side.
      dispatchers.push(...(await Promise.all([startTestApp({ databaseUrl: writer.databaseUrl }), startTestApp({ databaseUrl: writer.databaseUrl })])));
      await hook.waitFor(events, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ids = hook.received.map((message) => String(message.headers['webhook-id']));
      expect(new Set(ids).size).toBe(events);
      expect(ids).toHaveLength(events);
    } finally {
      for (const dispatcher of dispatchers) {
        await dispatcher.app.close();
        await dispatcher.orm.close(true);
      }
      await writer.close();
      await hook.close();
    }
  });
});

describe('a dispatcher with every place taken', () => {
  it('leaves new events queued, one row each, and delivers everything once when its receivers answer', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = () => resolve(204)));
    const hook = await startWebhookReceiver(() => held);
    // Attempts held for the whole test must not time out (and be tried again) on a slow machine.
    const app = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: '60000' } });
    try {
      const agent = await bootstrapAgent(app);
      // Ten endpoints, four attempts in flight each: more than the 32 places of a dispatcher.
      for (let n = 0; n < 10; n++) {
        expect((await app.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: `${hook.url}?n=${n}` } })).statusCode).toBe(201);
      }
      let hour = 0;
      const book = async () => {
        const start = new Date(Date.UTC(2034, 0, 1) + hour++ * 3_600_000);
        await createBooking(app, agent, start.toISOString(), new Date(start.getTime() + 1_800_000).toISOString());
      };
      for (let i = 0; i < 6; i++) await book();
      // Claims take whole events (ten deliveries each) while places are free: 32 places hold four events.
      await eventually(async () => (hook.hits >= 40 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(hook.hits).toBe(40);

      for (let i = 0; i < 10; i++) await book();
      // The burst waits as one queued row per event, none leased, and no delivery is written before its outcome.
      const [waiting] = await app.query<{ queued: number; leased: number; deliveries: number }>(
        `select count(*)::int as queued, count(leased_until)::int as leased, (select count(*)::int from webhook_deliveries) as deliveries
           from webhook_fanout where leased_until is null or leased_until > now()`,
      );
      expect(waiting).toEqual({ queued: 16, leased: 4, deliveries: 0 });

      // Answered, every event reaches every endpoint once; the queue empties.
      release();
      await hook.waitFor(160, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(hook.received).toHaveLength(160);
      const sent = hook.received.map((request) => `${request.path} ${request.headers['webhook-id']}`);
      expect(new Set(sent).size).toBe(160);
      await eventually(async () => ((await app.query<{ n: number }>('select count(*)::int as n from webhook_fanout'))[0]!.n === 0 ? true : undefined));
      // The last outcomes may still be on their way to the recorder.
      const delivered = async () => (await app.query<{ n: number }>(`select count(*)::int as n from webhook_deliveries where status = 'delivered'`))[0]!.n;
      await eventually(async () => ((await delivered()) >= 160 ? true : undefined));
      expect(await delivered()).toBe(160);
    } finally {
      release();
      await app.close();
      await hook.close();
    }
  }, 60_000);
});

describe('deliveries written with their first outcome', () => {
  let quiet: TestApp;
  let root: AgentWithToken;
  const clock = new TestClock(new Date('2031-03-01T12:00:00Z'));
  const LEASE_MS = 60_000;

  beforeAll(async () => {
    quiet = await startTestApp({ jobs: false, clock }); // no dispatcher: each test runs its claims itself
    root = await bootstrapAgent(quiet);
  });
  afterAll(() => quiet.close());

  interface Claimed {
    id: string;
    attempts: number;
    webhook_id: string;
    webhook_disabled: boolean;
    event_id: string;
    event_created_at: Date;
    queued: boolean;
  }
  const count = async (sql: string, params: unknown[] = []) => (await quiet.query<{ n: number }>(sql, params))[0]!.n;
  const claim = (limit: number, busy: string[] = [], inFlight: string[] = []) =>
    quiet.query<Claimed>(
      `select id, attempts, webhook_id, webhook_disabled, event_id::text, event_created_at, queued
         from claim_webhook_deliveries($1, $2, $3, null, $4::uuid[], $5::uuid[], 4) order by event_id, webhook_id`,
      [clock.now(), new Date(clock.now().getTime() + LEASE_MS), limit, inFlight, busy],
    );
  const record = (claimed: Claimed[], completesEvent: boolean) =>
    quiet.query('select record_webhook_attempts($1::jsonb, 5)', [
      JSON.stringify(
        claimed.map((delivery) => ({
          delivery_id: delivery.id,
          webhook_id: delivery.webhook_id,
          event_id: delivery.event_id,
          event_created_at: delivery.event_created_at,
          attempt: delivery.attempts + 1,
          attempted_at: clock.now(),
          status_code: 204,
          error: null,
          duration_ms: 3,
          status: 'delivered',
          next_attempt_at: null,
          finished_at: clock.now(),
          completes_event: completesEvent,
        })),
      ),
    ]);
  const deliveryId = async (eventId: string, webhookId: string) =>
    (await quiet.query<{ id: string }>('select webhook_delivery_id($1, $2) as id', [eventId, webhookId]))[0]!.id;
  const register = async (agent: AgentWithToken, url: string) =>
    (await quiet.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url } })).json<{ id: string }>().id;

  it('queues an event once, only when its agent has a matching endpoint, and writes its deliveries with their outcomes', async () => {
    const [withHooks, cancelOnly, without] = [await createAgent(quiet, root), await createAgent(quiet, root), await createAgent(quiet, root)];
    const hooks = [await register(withHooks, 'http://127.0.0.1:9/a'), await register(withHooks, 'http://127.0.0.1:9/b')].sort();
    await quiet.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(cancelOnly.token), payload: { url: 'http://127.0.0.1:9/c', events: ['booking.cancelled'] } });
    await Promise.all([withHooks, cancelOnly, without].map((agent) => createBooking(quiet, agent, '2031-04-01T09:00:00Z', '2031-04-01T10:00:00Z')));
    const queued = await quiet.query<{ agent_id: string; event_id: string }>('select e.agent_id, e.id::text as event_id from webhook_fanout f join booking_events e on e.id = f.event_id');
    expect(queued.map((row) => row.agent_id)).toEqual([withHooks.id]);

    const claimed = await claim(10);
    // One per endpoint, named before it is written; the event is leased, not claimable twice.
    expect(claimed.map(({ webhook_id, queued: fromQueue, attempts }) => ({ webhook_id, fromQueue, attempts }))).toEqual(
      hooks.map((webhook_id) => ({ webhook_id, fromQueue: true, attempts: 0 })),
    );
    expect(claimed.map((delivery) => delivery.id)).toEqual(await Promise.all(hooks.map((hook) => deliveryId(queued[0]!.event_id, hook))));
    expect(await claim(10)).toEqual([]);
    expect(await count('select count(*)::int as n from webhook_deliveries')).toBe(0);

    await record(claimed, false);
    expect(await count(`select count(*)::int as n from webhook_deliveries where status = 'delivered' and attempts = 1`)).toBe(2);
    expect(await count('select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.event_id = $1', [queued[0]!.event_id])).toBe(2);
    // Not marked as its last: the event stays queued (leased) until an outcome says so.
    expect(await count('select count(*)::int as n from webhook_fanout')).toBe(1);
    await record([], false);
    await record(claimed.slice(1).map((delivery) => ({ ...delivery, attempts: 1 })), true); // a repeat records nothing more
    expect(await count('select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.event_id = $1', [queued[0]!.event_id])).toBe(2);
    expect(await count('select count(*)::int as n from webhook_fanout')).toBe(0);
  });

  it('sends an event to the endpoints registered and enabled when it happened', async () => {
    const owner = await createAgent(quiet, root);
    const early = await register(owner, 'http://127.0.0.1:9/early');
    const disabledLater = await register(owner, 'http://127.0.0.1:9/later');
    const disabledBefore = await register(owner, 'http://127.0.0.1:9/before');
    await quiet.query('update webhooks set disabled_at = $2 where id = $1', [disabledBefore, clock.now()]);
    clock.set('2031-03-01T12:01:00Z');
    await createBooking(quiet, owner, '2031-05-01T09:00:00Z', '2031-05-01T10:00:00Z');
    // After the event, before the dispatcher's claim: one endpoint is registered, one disabled.
    clock.set('2031-03-01T12:02:00Z');
    await register(owner, 'http://127.0.0.1:9/new');
    await quiet.query('update webhooks set disabled_at = $2 where id = $1', [disabledLater, clock.now()]);

    const claimed = await claim(10);
    expect(claimed.map(({ webhook_id, webhook_disabled }) => ({ webhook_id, webhook_disabled }))).toEqual(
      [
        { webhook_id: early, webhook_disabled: false },
        { webhook_id: disabledLater, webhook_disabled: true },
      ].sort((a, b) => a.webhook_id.localeCompare(b.webhook_id)),
    );
    await record(claimed, true);
    expect(await count('select count(*)::int as n from webhook_fanout')).toBe(0);
  });

  it('claims an event again when its lease ends, for the endpoints still without a delivery only', async () => {
    const owner = await createAgent(quiet, root);
    const hooks = [await register(owner, 'http://127.0.0.1:9/x'), await register(owner, 'http://127.0.0.1:9/y'), await register(owner, 'http://127.0.0.1:9/z')];
    await createBooking(quiet, owner, '2031-06-01T09:00:00Z', '2031-06-01T10:00:00Z');
    const first = await claim(10);
    expect(first).toHaveLength(3);
    // The process recorded one outcome, marked as the event's last (a batch with the others failed), then died.
    await record(first.slice(0, 1), true);
    expect(await count('select count(*)::int as n from webhook_fanout where event_id = $1', [first[0]!.event_id])).toBe(1);
    expect(await claim(10)).toEqual([]); // still leased

    clock.set(new Date(clock.now().getTime() + LEASE_MS + 1));
    // An attempt still in flight in this process is not claimed by it twice.
    const again = await claim(10, [], [first[1]!.id]);
    expect(again.map((delivery) => delivery.id)).toEqual([first[2]!.id]);
    clock.set(new Date(clock.now().getTime() + LEASE_MS + 1));
    const rest = await claim(10);
    expect(rest.map((delivery) => delivery.id).sort()).toEqual([first[1]!.id, first[2]!.id].sort());
    await record(rest, true);
    expect(await count('select count(*)::int as n from webhook_deliveries where event_id = $1', [first[0]!.event_id])).toBe(hooks.length);
    expect(await count('select count(*)::int as n from webhook_fanout where event_id = $1', [first[0]!.event_id])).toBe(0);
  });

  it('takes other queued events while another claim holds the oldest (processes claiming at once)', async () => {
    const agent = await createAgent(quiet, root);
    await register(agent, 'http://127.0.0.1:9/p');
    await register(agent, 'http://127.0.0.1:9/q');
    for (let day = 1; day <= 6; day++) await createBooking(quiet, agent, `2031-09-0${day}T09:00:00Z`, `2031-09-0${day}T10:00:00Z`);
    const other = new pg.Client({ connectionString: quiet.databaseUrl });
    await other.connect();
    try {
      await other.query('begin');
      const first = (
        await other.query<{ event_id: string }>(`select event_id::text from claim_webhook_deliveries($1, $2, 4, null, '{}', '{}', 4)`, [
          clock.now(),
          new Date(clock.now().getTime() + LEASE_MS),
        ])
      ).rows;
      // Its transaction still open: the events it took are locked, not yet leased.
      const second = await claim(4);
      await other.query('commit');
      expect(first).toHaveLength(4);
      expect(second).toHaveLength(4);
      const events = (rows: { event_id: string }[]) => [...new Set(rows.map((row) => row.event_id))];
      expect(events(second).filter((event) => events(first).includes(event))).toEqual([]);
      // The first locked only the two events it took: the second took the next two, not ones further back.
      const oldest = (await quiet.query<{ cursor: string }>('select e.id::text as cursor from booking_events e where e.agent_id = $1 order by e.id limit 4', [agent.id])).map(
        (row) => row.cursor,
      );
      expect([...events(first), ...events(second)].sort((a, b) => Number(a) - Number(b))).toEqual(oldest);
    } finally {
      await other.end();
      // Its events stay out of the next test's claims.
      await quiet.query('delete from webhook_fanout f using booking_events e where e.id = f.event_id and e.agent_id = $1', [agent.id]);
    }
  });

  it('keeps a quarter of its places for queued events while retries wait, and its only place for a retry', async () => {
    const retrying = await createAgent(quiet, root);
    const flaky = [await register(retrying, 'http://127.0.0.1:9/r1'), await register(retrying, 'http://127.0.0.1:9/r2')];
    for (let day = 1; day <= 4; day++) await createBooking(quiet, retrying, `2031-10-0${day}T09:00:00Z`, `2031-10-0${day}T10:00:00Z`);
    // Eight retries due (two endpoints, four events), none queued any more.
    await quiet.query(
      `with e as (delete from webhook_fanout f using booking_events e where e.id = f.event_id and e.agent_id = $1 returning e.id, e.created_at)
       insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
       select gen_random_uuid(), w, e.id, 'pending', 1, $2::timestamptz - interval '1 second', e.created_at from e, unnest($3::uuid[]) w`,
      [retrying.id, clock.now(), flaky],
    );
    const fresh = await createAgent(quiet, root);
    await register(fresh, 'http://127.0.0.1:9/fresh');
    await createBooking(quiet, fresh, '2031-10-09T09:00:00Z', '2031-10-09T10:00:00Z');

    // One place: the retry (a quarter of one is none).
    expect((await claim(1)).map((delivery) => delivery.queued)).toEqual([false]);
    // Four places with retries enough for all: three retries, and the new event gets the fourth.
    expect((await claim(4)).map((delivery) => delivery.queued).sort()).toEqual([false, false, false, true]);
    await quiet.query('delete from webhook_deliveries d using webhooks w where w.id = d.webhook_id and w.agent_id = $1', [retrying.id]);
  });

  it('takes whole events for its places, and writes the deliveries past an endpoint’s places as waiting ones', async () => {
    const agent = await createAgent(quiet, root);
    const hooks = [await register(agent, 'http://127.0.0.1:9/1'), await register(agent, 'http://127.0.0.1:9/2'), await register(agent, 'http://127.0.0.1:9/3')];
    for (let day = 1; day <= 20; day++) {
      const start = new Date(Date.UTC(2031, 6, day, 9));
      await createBooking(quiet, agent, start.toISOString(), new Date(start.getTime() + 3_600_000).toISOString());
    }
    const ofAgent = 'from webhook_fanout f join booking_events e on e.id = f.event_id where e.agent_id = $1';
    const queued = () => count(`select count(*)::int as n ${ofAgent} and f.leased_until is null`, [agent.id]);
    expect(await queued()).toBe(20);

    // Four places: the first event fills three, the second starts before they run out (3 deliveries each).
    expect(await claim(4)).toHaveLength(6);
    expect(await queued()).toBe(18);
    // Endpoint 1 busy in this process: its deliveries wait in the table, due at once, for any process.
    const busy = await claim(3, [hooks[0]!]);
    expect(busy.map((delivery) => delivery.webhook_id).sort()).toEqual([hooks[1]!, hooks[2]!].sort());
    expect(await count(`select count(*)::int as n from webhook_deliveries where status = 'pending' and webhook_id = $1`, [hooks[0]!])).toBe(1);
    // The waiting one first, then ten events: four places per endpoint (the waiting one took one of endpoint 1's),
    // and the other deliveries of each endpoint wait.
    const many = await claim(30);
    expect(many.filter((delivery) => !delivery.queued).map((delivery) => delivery.webhook_id)).toEqual([hooks[0]!]);
    expect(many.filter((delivery) => delivery.queued)).toHaveLength(3 + 4 + 4);
    const waiting = () => count(`select count(*)::int as n from webhook_deliveries where status = 'pending' and next_attempt_at <= $1`, [clock.now()]);
    expect(await waiting()).toBe(7 + 6 + 6);
    // Waiting deliveries come first in the next claim (at most four per endpoint); of the seven events left, the six
    // that start within the 18 places left are taken, and all their deliveries wait (every endpoint's places are used).
    const next = await claim(30);
    expect(next.map((delivery) => delivery.queued)).toEqual(Array(12).fill(false));
    expect(await queued()).toBe(1);
    expect(await waiting()).toBe(19 - 12 + 6 * 3);
    // Events all of whose deliveries wait left the queue; the seven with one in flight here stay leased.
    expect(await count(`select count(*)::int as n ${ofAgent} and f.leased_until is not null`, [agent.id])).toBe(2 + 1 + 4);
  });
});
