import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { parseWalPosition } from '../../../src/platform/db/wal-position.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { hourSlot } from '../../factories/bookings.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { bearer, startTestApp, withoutCost, type TestApp } from '../../harness.js';
import { CreateBookingDocument, MeDocument } from '../../generated/graphql.js';

const TOKEN = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;
const position = (token: string | undefined) => parseWalPosition(token ?? '')!;
const credentialHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Consistency tokens without replicas: every write answers one, remembered for its credential
 * (read-replicas.test.ts shows what they are for, with a streaming replica and two processes).
 */
describe('consistency tokens', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let day = 0;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const remembered = async (token: string) =>
    (await t.query<{ position: string }>('select position::text as position from consistency_tokens where credential_hash = $1', [credentialHash(token)]))[0]?.position;

  it('answers a REST write with the WAL position after its commit, remembered for its credential', async () => {
    const agent = await createAgent(t, root);
    const [before] = await t.query<{ position: string }>('select pg_current_wal_insert_lsn()::text as position');
    const created = await t.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, ...hourSlot('2071-01-01T09:00:00Z', day++) } });
    expect(created.statusCode).toBe(201);
    const token = created.headers['x-consistency-token'] as string;
    expect(token).toMatch(TOKEN);
    expect(position(token)).toBeGreaterThan(position(before!.position));
    expect(await remembered(agent.token)).toBe(token);

    const next = await t.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, ...hourSlot('2071-01-01T09:00:00Z', day++) } });
    expect(position(next.headers['x-consistency-token'] as string)).toBeGreaterThan(position(token));
    expect(await remembered(agent.token)).toBe(next.headers['x-consistency-token']);
  });

  it('answers none to a read or to a refused write', async () => {
    const agent = await createAgent(t, root);
    const listed = await t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(agent.token) });
    expect(listed.statusCode).toBe(200);
    expect(listed.headers['x-consistency-token']).toBeUndefined();
    const refused = await t.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, startsAt: 'tomorrow' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['x-consistency-token']).toBeUndefined();
    expect(await remembered(agent.token)).toBeUndefined();
  });

  it('answers a GraphQL mutation with the token in extensions and the header, a query with neither', async () => {
    const agent = await createAgent(t, root);
    const response = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: { ...bearer(agent.token), 'content-type': 'application/json' },
      payload: { query: 'mutation ($input: CreateBookingInput!) { createBooking(input: $input) { id } }', variables: { input: { agentId: agent.id, ...hourSlot('2071-01-01T09:00:00Z', day++) } } },
    });
    const body = response.json<{ data: unknown; extensions: { consistencyToken: string } }>();
    expect(body.extensions.consistencyToken).toMatch(TOKEN);
    expect(response.headers['x-consistency-token']).toBe(body.extensions.consistencyToken);
    expect(await remembered(agent.token)).toBe(body.extensions.consistencyToken);

    const query = await t.rest({ method: 'POST', url: '/graphql', headers: { ...bearer(agent.token), 'content-type': 'application/json' }, payload: { query: '{ me { id } }' } });
    expect(withoutCost(query.json())).toEqual({ data: { me: { id: agent.id } } });
    expect(query.headers['x-consistency-token']).toBeUndefined();
  });

  it('remembers the token of a mutation over graphql-ws for the connection’s credential', async () => {
    const agent = await createAgent(t, root);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address() as { port: number };
    const client = createClient({ url: `ws://127.0.0.1:${address.port}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${agent.token}` }, retryAttempts: 0 });
    try {
      const [before] = await t.query<{ position: string }>('select pg_current_wal_insert_lsn()::text as position');
      const result = await new Promise<unknown>((resolve, reject) => {
        client.subscribe(
          { query: 'mutation ($input: CreateBookingInput!) { createBooking(input: $input) { id } }', variables: { input: { agentId: agent.id, ...hourSlot('2071-01-01T09:00:00Z', day++) } } },
          { next: resolve, error: reject, complete: () => undefined },
        );
      });
      expect(result).toMatchObject({ data: { createBooking: { id: expect.any(String) } } });
      expect(position(await remembered(agent.token))).toBeGreaterThan(position(before!.position));
    } finally {
      await client.dispose();
    }
  });

  it('answers an MCP tool that writes with the token as a header, a read-only tool without', async () => {
    const agent = await createAgent(t, root);
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const headers: (string | null)[] = [];
    const address = t.app.server.address() as { port: number };
    const mcp = await connectMcp(t, bearer(agent.token));
    // The SDK client hides headers: the same calls again over plain HTTP, as the client sends them.
    const call = async (name: string, args: Record<string, unknown>) => {
      const response = await fetch(`http://127.0.0.1:${address.port}/mcp`, {
        method: 'POST',
        headers: { ...bearer(agent.token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
      expect(response.status).toBe(200);
      headers.push(response.headers.get('x-consistency-token'));
      return response.json();
    };
    try {
      expect((await callTool(mcp, 'list_bookings', {})).isError).toBe(false);
      await call('create_booking', { ...hourSlot('2071-01-01T09:00:00Z', day++) });
      await call('list_bookings', {});
      expect(headers[0]).toMatch(TOKEN);
      expect(headers[0]).toBe(await remembered(agent.token));
      expect(headers[1]).toBeNull();
    } finally {
      await mcp.close();
    }
  });

  it('refuses a malformed token with 400 naming the header, in each transport’s error shape', async () => {
    const rest = await t.rest({ method: 'GET', url: '/api/bookings', headers: { ...bearer(root.token), 'x-consistency-token': 'yesterday' } });
    expect(rest.statusCode).toBe(400);
    expect(rest.json()).toEqual({ errors: { 'X-Consistency-Token': expect.stringMatching(/^must be a consistency token/) } });
    const graphql = await t.rest({ method: 'POST', url: '/graphql', headers: { ...bearer(root.token), 'content-type': 'application/json', 'x-consistency-token': '0/1/2' }, payload: { query: '{ me { id } }' } });
    expect(graphql.statusCode).toBe(400);
    expect(graphql.json()).toMatchObject({ errors: [{ extensions: { code: 'validation', errors: { 'X-Consistency-Token': expect.any(String) } } }] });
    // A well-formed token is taken as it is, even one from the future: the caller's reads then stay on the primary.
    const fine = await t.rest({ method: 'GET', url: '/api/bookings', headers: { ...bearer(root.token), 'x-consistency-token': 'FFFFFFFF/0' } });
    expect(fine.statusCode).toBe(200);
  });

  it('keeps answering writes from the GraphQL documents clients generate', async () => {
    const agent = await createAgent(t, root);
    const created = await t.gql(CreateBookingDocument, { input: { agentId: agent.id, ...hourSlot('2071-01-01T09:00:00Z', day++) } }, bearer(agent.token));
    expect(created.errors).toBeUndefined();
    expect((created.extensions as { consistencyToken?: string } | undefined)?.consistencyToken).toMatch(TOKEN);
    const me = await t.gql(MeDocument, {}, bearer(agent.token));
    expect((me.extensions as { consistencyToken?: string } | undefined)?.consistencyToken).toBeUndefined();
  });
});
