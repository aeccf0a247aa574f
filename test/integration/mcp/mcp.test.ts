import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { MINT, pair, startFakeScreener } from '../../factories/fake-screener.js';
import { BOOKING_LIMITS } from '../../../src/modules/bookings/index.js';
import { startTestApp, type TestApp } from '../../harness.js';

describe('MCP at /mcp through the SDK client', () => {
  let t: TestApp;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  let base: URL;
  let root: AgentWithToken;
  const clients: Client[] = [];

  const connect = async (token?: string) => {
    const client = new Client({ name: 'gateway-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(base, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    const [content] = result.content as { type: string; text: string }[];
    return { isError: result.isError === true, body: JSON.parse(content!.text) };
  };

  beforeAll(async () => {
    screener = await startFakeScreener({ [MINT]: [pair()] });
    t = await startTestApp({ jobs: false, env: { SCREENER_URL: screener.url } });
    root = await bootstrapAgent(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = new URL(`http://127.0.0.1:${address.port}/mcp`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await t.close();
    await screener.close();
  });

  it('lists the token and scheduling tools', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'availability',
      'booking_changes',
      'cancel_booking',
      'check_slot',
      'clear_availability_rules',
      'confirm_hold',
      'create_booking',
      'create_group_booking',
      'get_availability_rules',
      'get_token_analytics',
      'get_token_safety',
      'hold_slot',
      'list_bookings',
      'list_holds',
      'propose_first_available',
      'propose_slot',
      'release_hold',
      'reschedule_booking',
      'respond_to_proposal',
      'set_availability_rules',
    ]);
  });

  it('answers the token tools with the same data as REST, and the REST error codes', async () => {
    const client = await connect();
    const analytics = await call(client, 'get_token_analytics', { mint: MINT });
    const rest = (await t.rest({ method: 'GET', url: `/v1/tokens/${MINT}/analytics` })).json();
    expect(analytics).toEqual({ isError: false, body: { ...rest, age_seconds: expect.any(Number) } });
    const safety = await call(client, 'get_token_safety', { mint: MINT });
    expect(safety.body).toMatchObject({ mint: MINT, score: expect.any(Number), checks: expect.any(Array) });
    expect(await call(client, 'get_token_safety', { mint: 'nope' })).toEqual({ isError: true, body: { error: 'validation', message: expect.any(String), errors: { mint: expect.any(String) } } });
    expect((await call(client, 'get_token_analytics', { mint: 'Unknown111111111111111111111111111111111111' })).body.error).toBe('not_found');
  });

  it('books, lists, proposes, accepts and cancels as the agent of the token', async () => {
    const owner = await createAgent(t, root);
    const taker = await createAgent(t, root);
    const asOwner = await connect(owner.token);
    const asTaker = await connect(taker.token);

    const booking = await call(asOwner, 'create_booking', { startsAt: '2031-02-01T09:00:00Z', endsAt: '2031-02-01T10:00:00Z' });
    expect(booking).toMatchObject({ isError: false, body: { agentId: owner.id, status: 'confirmed', startsAt: '2031-02-01T09:00:00.000Z' } });
    const clash = await call(asOwner, 'create_booking', { startsAt: '2031-02-01T09:30:00Z', endsAt: '2031-02-01T10:30:00Z' });
    expect(clash).toEqual({ isError: true, body: { error: 'slot_taken', message: expect.any(String) } });
    expect((await call(asOwner, 'list_bookings', {})).body.items.map((item: { id: string }) => item.id)).toEqual([booking.body.id]);

    const proposal = await call(asTaker, 'propose_slot', { targetAgentId: owner.id, startsAt: '2031-02-01T09:00:00Z', endsAt: '2031-02-01T10:00:00Z' });
    expect(proposal.body).toMatchObject({ status: 'pending', proposerAgentId: taker.id });
    expect((await call(asTaker, 'respond_to_proposal', { proposalId: proposal.body.id, decision: 'accept' })).body.error).toBe('forbidden');
    expect((await call(asOwner, 'respond_to_proposal', { proposalId: proposal.body.id, decision: 'accept' })).body.status).toBe('accepted');
    expect((await call(asTaker, 'list_bookings', {})).body.items.map((item: { id: string }) => item.id)).toEqual([booking.body.id]);

    const cancelled = await call(asTaker, 'cancel_booking', { bookingId: booking.body.id });
    expect(cancelled.body.status).toBe('cancelled');
  });

  it('answers availability with the same data as REST and proposes the first common slot, with the REST error codes', async () => {
    const parent = await createAgent(t, root);
    const child = await createAgent(t, parent);
    const stranger = await createAgent(t, root);
    await t.rest({ method: 'POST', url: '/api/bookings', headers: { authorization: `Bearer ${child.token}` }, payload: { agentId: child.id, startsAt: '2031-03-01T00:00:00Z', endsAt: '2031-03-01T10:00:00Z' } });
    const window = { duration: 60, from: '2031-03-01T00:00:00Z', to: '2031-03-02T00:00:00Z' };
    const asParent = await connect(parent.token);

    const slots = await call(asParent, 'availability', { agentIds: [child.id], ...window, limit: 3 });
    const rest = await t.rest({ method: 'GET', url: `/api/availability?agents=${child.id}&duration=60&from=2031-03-01T00:00:00Z&to=2031-03-02T00:00:00Z&limit=3`, headers: { authorization: `Bearer ${parent.token}` } });
    expect(slots).toEqual({ isError: false, body: rest.json() });
    expect(slots.body.items[0]).toEqual({ startsAt: '2031-03-01T10:00:00.000Z', endsAt: '2031-03-01T11:00:00.000Z' });
    const next = await call(asParent, 'availability', { agentIds: [child.id], ...window, limit: 3, after: slots.body.nextCursor });
    expect(next.body.items[0].startsAt).toBe('2031-03-01T10:45:00.000Z');

    const proposal = await call(asParent, 'propose_first_available', { targetAgentId: child.id, ...window, granularity: 30 });
    expect(proposal).toMatchObject({ isError: false, body: { proposerAgentId: parent.id, targetAgentId: child.id, startsAt: '2031-03-01T10:00:00.000Z', status: 'pending' } });
    expect((await call(await connect(stranger.token), 'propose_first_available', { targetAgentId: child.id, ...window })).body.error).toBe('forbidden');
    expect((await call(asParent, 'availability', { agentIds: [stranger.id], ...window })).body.error).toBe('forbidden');
  });

  it('refuses scheduling tools without a valid agent token', async () => {
    const anonymous = await connect();
    expect(await call(anonymous, 'list_bookings', {})).toEqual({ isError: true, body: { error: 'unauthorized', message: expect.any(String) } });
    const forged = await connect('agt_forged');
    expect((await call(forged, 'create_booking', { startsAt: '2031-02-01T09:00:00Z', endsAt: '2031-02-01T10:00:00Z' })).body.error).toBe('unauthorized');
  });

  it(`list_bookings takes limit up to ${BOOKING_LIMITS.listMax} and refuses one more, naming limit`, async () => {
    const asAgent = await connect((await createAgent(t, root)).token);
    expect(await call(asAgent, 'list_bookings', { limit: BOOKING_LIMITS.listMax })).toEqual({ isError: false, body: { items: [], nextCursor: null } });
    expect(await call(asAgent, 'list_bookings', { limit: BOOKING_LIMITS.listMax + 1 })).toEqual({
      isError: true,
      body: { error: 'validation', message: `limit must be <= ${BOOKING_LIMITS.listMax}`, errors: { limit: `must be <= ${BOOKING_LIMITS.listMax}` } },
    });
  });
});
