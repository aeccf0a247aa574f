import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import createClient from 'openapi-fetch';
import type { paths } from '../../generated/openapi.js';
import { Mailbox } from '../../factories/mailbox.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../factories/webhook-receiver.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

// The client a user generates: `openapi-typescript` types from schema/openapi.json (the document the
// server serves, `npm run codegen`) and the `openapi-fetch` runtime, over real HTTP. A contract change
// that breaks these calls breaks `npm run typecheck`.
type GatewayClient = ReturnType<typeof createClient<paths>>;

/** The body of a successful answer; anything else fails the test with the status and error body. */
function ok<Data>(result: { data?: Data; error?: unknown; response: Response }): Data {
  if (result.data === undefined) throw new Error(`${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

describe('a client generated from the OpenAPI document', () => {
  let t: TestApp;
  let client: GatewayClient;
  let receiver: WebhookReceiver;
  /** The installation's first agent, bootstrapped by the first flow (there is only one). */
  let rootToken = '';
  const mailbox = new Mailbox();
  beforeAll(async () => {
    t = await startTestApp({ mailer: mailbox });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = createClient<paths>({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('runs an agent’s whole flow: bootstrap, child agent, book, list a window, propose, accept, webhook, occurrences', async () => {
    const root = ok(await client.POST('/api/agents', { body: { name: 'root', bootstrap: true } }));
    expect(root.public_token).toMatch(/^agt_/);
    rootToken = root.public_token;
    expect(root.next_step.authorization).toBe('Authorization: Bearer <public_token>');

    const claimedAgain = await client.POST('/api/agents', { body: { name: 'second root', bootstrap: true } });
    expect(claimedAgain.response.status).toBe(409);
    expect(claimedAgain.error).toEqual({ error: 'bootstrap_claimed', message: expect.any(String) });

    // The child is created with X-API-Key, everything after with Authorization: the two documented forms.
    const worker = ok(
      await client.POST('/api/agents', {
        params: { header: { 'idempotency-key': 'worker-1' } },
        headers: { 'x-api-key': root.public_token },
        body: { name: 'worker', metadata: { role: 'worker' } },
      }),
    );
    const asRoot = bearer(root.public_token);
    const asWorker = bearer(worker.public_token);

    const hook = ok(
      await client.POST('/api/webhooks', { headers: asWorker, body: { url: receiver.url, events: ['booking.created'] } }),
    );
    expect(hook.secret).toMatch(/^whsec_/);
    expect(ok(await client.GET('/api/webhooks', { headers: asWorker })).items.map((item) => item.id)).toEqual([hook.id]);

    const slot = { startsAt: '2030-03-04T10:00:00+01:00', endsAt: '2030-03-04T10:30:00+01:00' };
    const booking = ok(
      await client.POST('/api/bookings', {
        params: { header: { 'idempotency-key': 'standup-2030-03-04' } },
        headers: asRoot,
        body: { agentId: root.id, ...slot },
      }),
    );
    expect(booking).toMatchObject({ agentId: root.id, startsAt: '2030-03-04T09:00:00.000Z', endsAt: '2030-03-04T09:30:00.000Z', status: 'confirmed' });

    const window = ok(
      await client.GET('/api/bookings', { headers: asRoot, params: { query: { from: '2030-03-04T00:00:00Z', to: '2030-03-05T00:00:00Z', limit: 50 } } }),
    );
    expect(window.items.map((item) => item.id)).toEqual([booking.id]);
    const before = ok(await client.GET('/api/bookings', { headers: asRoot, params: { query: { from: '2030-03-03T00:00:00Z', to: '2030-03-04T00:00:00Z' } } }));
    expect(before.items).toEqual([]);

    const proposal = ok(await client.POST('/api/proposals', { headers: asWorker, body: { targetAgentId: root.id, ...slot } }));
    expect(proposal).toMatchObject({ proposerAgentId: worker.id, targetAgentId: root.id, status: 'pending' });
    expect(ok(await client.GET('/api/proposals', { headers: asRoot, params: { query: { role: 'incoming', status: 'pending' } } })).items).toEqual([proposal]);

    const accepted = ok(await client.PATCH('/api/proposals/{id}/accept', { headers: asRoot, params: { path: { id: proposal.id } } }));
    expect(accepted.status).toBe('accepted');
    const acceptedAgain = await client.PATCH('/api/proposals/{id}/accept', { headers: asRoot, params: { path: { id: proposal.id } } });
    expect(acceptedAgain.error).toEqual({ error: 'proposal_not_pending', message: expect.any(String) });

    // The root's booking of exactly that range moved to the worker, who hears of it by webhook.
    const moved = ok(await client.GET('/api/bookings', { headers: asWorker })).items;
    expect(moved).toEqual([expect.objectContaining({ id: booking.id, agentId: worker.id, status: 'confirmed' })]);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.json).toMatchObject({ type: 'booking.created', data: { booking: { id: booking.id, agentId: worker.id } } });

    const occurrences = ok(await client.GET('/api/bookings/{id}/occurrences', { headers: asWorker, params: { path: { id: booking.id }, query: { limit: 5 } } }));
    expect(occurrences.items).toEqual([{ startsAt: '2030-03-04T09:00:00.000Z', endsAt: '2030-03-04T09:30:00.000Z' }]);
    const othersOccurrences = await client.GET('/api/bookings/{id}/occurrences', { headers: asRoot, params: { path: { id: booking.id } } });
    expect(othersOccurrences.response.status).toBe(403);
  });

  it('runs a directory flow: magic-link sign-in, submit a tool as an agent, vote', async () => {
    const email = `client-${Date.now()}@example.com`;
    const requested = ok(await client.POST('/api/auth/magic-link', { body: { email } }));
    expect(requested.success).toBe(true);
    const session = ok(await client.POST('/api/auth/verify', { body: { token: mailbox.tokenFor(email) } }));
    expect(session.user.email).toBe(email);

    const [category] = ok(await client.GET('/api/categories')).categories;
    if (!category) throw new Error('the migrations seed categories');
    const { tool } = ok(
      await client.POST('/api/tools', {
        headers: bearer(session.token),
        params: { header: { 'x-agent-id': 'scout-7' } },
        body: { name: 'Typed client', url: `https://typed-client-${Date.now()}.example.com`, description: 'Found by an agent.', category_id: category.id, pricing_model: 'free' },
      }),
    );
    expect(tool).toMatchObject({ submission_source: 'agent', submitted_by_agent: 'scout-7', category_slug: category.slug, vote_count: 0, pricing_model: 'free' });

    const vote = ok(await client.POST('/api/tools/{id}/vote', { headers: bearer(session.token), params: { path: { id: String(tool.id) } } }));
    expect(vote).toEqual({ success: true, voted: true, vote_count: 1 });
    expect(ok(await client.GET('/api/tools/{id}', { params: { path: { id: String(tool.id) } } })).tool.vote_count).toBe(1);

    const anonymousVote = await client.POST('/api/tools/{id}/vote', { params: { path: { id: String(tool.id) } } });
    expect(anonymousVote.response.status).toBe(401);
    expect(anonymousVote.error).toEqual({ success: false, message: expect.any(String) });
  });

  it('runs the scheduler as a client would: rules set by the parent, why not this slot, a hold confirmed, a reschedule with If-Match', async () => {
    if (!rootToken) throw new Error('this flow runs after the first one, which bootstraps the installation');
    const asRoot = bearer(rootToken);
    const worker = ok(await client.POST('/api/agents', { headers: asRoot, body: { name: 'scheduled worker' } }));
    const asWorker = bearer(worker.public_token);
    // Tuesdays 09:00–17:00 UTC, set by the parent: they bind the parent's holds on the worker's calendar.
    const rules = ok(
      await client.PUT('/api/agents/{id}/availability-rules', {
        params: { path: { id: worker.id } },
        headers: asRoot,
        body: { timeZone: 'UTC', weeklyHours: [{ day: 'tuesday', start: '09:00', end: '17:00' }] },
      }),
    );
    expect(rules.timeZone).toBe('UTC');

    const early = ok(
      await client.GET('/api/availability/check', {
        params: { query: { agent: worker.id, startsAt: '2031-03-04T07:00:00Z', endsAt: '2031-03-04T07:30:00Z' } },
        headers: asRoot,
      }),
    );
    expect({ available: early.available, codes: early.reasons.map((reason) => reason.code) }).toEqual({ available: false, codes: ['outside_working_hours'] });

    const hold = ok(await client.POST('/api/holds', { headers: asRoot, body: { agentIds: [worker.id], startsAt: '2031-03-04T10:00:00Z', endsAt: '2031-03-04T10:30:00Z' } }));
    const taken = await client.POST('/api/bookings', { headers: asWorker, body: { agentId: worker.id, startsAt: '2031-03-04T10:00:00Z', endsAt: '2031-03-04T10:30:00Z' } });
    expect(taken.response.status).toBe(409);
    expect(taken.error).toMatchObject({ error: 'slot_taken' });
    const confirmed = ok(await client.PATCH('/api/holds/{id}/confirm', { params: { path: { id: hold.id } }, headers: asRoot }));
    const [booking] = confirmed.bookings;
    expect(booking).toMatchObject({ agentId: worker.id, startsAt: '2031-03-04T10:00:00.000Z', status: 'confirmed' });

    const read = await client.GET('/api/bookings/{id}', { params: { path: { id: booking!.id } }, headers: asWorker });
    const etag = read.response.headers.get('etag');
    expect(etag).toMatch(/^"\d+"$/);
    const moved = await client.PATCH('/api/bookings/{id}/reschedule', {
      params: { path: { id: booking!.id }, header: { 'if-match': etag! } },
      headers: asWorker,
      body: { startsAt: '2031-03-04T11:00:00Z', endsAt: '2031-03-04T11:30:00Z' },
    });
    expect(ok(moved)).toMatchObject({ id: booking!.id, startsAt: '2031-03-04T11:00:00.000Z' });
    expect(moved.response.headers.get('etag')).not.toBe(etag);
    const stale = await client.PATCH('/api/bookings/{id}/reschedule', {
      params: { path: { id: booking!.id }, header: { 'if-match': etag! } },
      headers: asWorker,
      body: { startsAt: '2031-03-04T12:00:00Z', endsAt: '2031-03-04T12:30:00Z' },
    });
    expect(stale.response.status).toBe(412);
    expect(stale.error).toMatchObject({ error: 'version_mismatch' });
  });

  it('reads the status report with the types the document declares', async () => {
    const report = ok(await client.GET('/api/status'));
    // Without a response schema the generated types give the answer no body (`content?: never`), and these member
    // reads fail `npm run typecheck`.
    const database: 'operational' | 'degraded' | 'down' = report.services.database.status;
    expect(database).toBe('operational');
    expect(report.services.webhooks.attempts_last_5min).toEqual({ delivered: expect.any(Number), retrying: expect.any(Number), failed: expect.any(Number) });
    expect(report.metrics.total_agents).toBeGreaterThanOrEqual(0);
    expect(report.version).toBe('1.0.0');
  });
});
