import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { GRAPHQL_SSE_PATH } from '../../../src/platform/graphql/sse.js';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { startTestApp, type TestApp } from '../../harness.js';

/** Subscriptions whose root field is conditioned, each way it can be: graphql-js 16 threw on the first, and started a stream of nothing for the others. */
const CONDITIONED = [
  { query: 'subscription ($skip: Boolean!) { priceSnapshotAdded @skip(if: $skip) { id } }', variables: { skip: false } },
  { query: 'subscription { priceSnapshotAdded @skip(if: true) { id } }', variables: {} },
  { query: 'subscription Prices($on: Boolean = true) { ...Root } fragment Root on Subscription { priceSnapshotAdded @include(if: $on) { id } }', variables: {} },
  { query: 'subscription { ... on Subscription { bookingEvents @include(if: false) { cursor } } }', variables: {} },
  // GraphQL allows white space, commas and comments between `@` and the name.
  { query: 'subscription ($v: Boolean!) { priceSnapshotAdded @ skip(if: $v) { id } }', variables: { v: false } },
  { query: 'subscription ($v: Boolean!) { priceSnapshotAdded @,#why\ninclude(if: $v) { id } }', variables: { v: true } },
];
const REFUSAL = { message: expect.stringMatching(/must not use @(skip|include) on its root field/), locations: expect.any(Array), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } };

describe("@skip and @include on a subscription's root field: refused as a validation error by every transport", () => {
  let t: TestApp;
  let agent: AgentWithToken;
  let base: string;
  const wsClients: WsClient[] = [];
  const sseClients: SseClient[] = [];

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    agent = await bootstrapAgent(t, 'conditions');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await Promise.all(wsClients.map((client) => client.dispose()));
    for (const client of sseClients) client.dispose();
    await t.close();
  });

  it('over HTTP: 400 (200 for a client that reads only JSON), as any document that does not validate, not a 500', async () => {
    const post = (body: object, accept = 'application/graphql-response+json') =>
      fetch(`http://${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${agent.token}` }, body: JSON.stringify(body) });
    const invalid = await post({ query: '{ nope }' });
    expect(invalid.status).toBe(400);
    for (const operation of CONDITIONED) {
      const answer = await post(operation);
      expect({ query: operation.query, status: answer.status }).toEqual({ query: operation.query, status: invalid.status });
      expect(await answer.json()).toEqual({ errors: [REFUSAL] });
    }
    const legacy = await post(CONDITIONED[0]!, 'application/json');
    expect(legacy.status).toBe(200);
    expect((await legacy.json()).errors).toEqual([REFUSAL]);
    // Below the root, and in queries, the directives are what they always are.
    const nested = await post({ query: 'query ($v: Boolean!) { me { id name @include(if: $v) } }', variables: { v: false } });
    expect(await nested.json()).toMatchObject({ data: { me: { id: agent.id } } });
  });

  it('over graphql-ws: an error for the operation, and the socket stays open for the next', async () => {
    const client = createWsClient({ url: `ws://${base}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${agent.token}` }, retryAttempts: 0 });
    wsClients.push(client);
    const run = (operation: { query: string; variables: Record<string, unknown> }) =>
      new Promise<unknown>((resolve) => {
        let last: unknown;
        client.subscribe(operation, { next: (value) => (last = value), error: (error) => resolve({ error }), complete: () => resolve(last) });
      });
    for (const operation of CONDITIONED) expect(await run(operation)).toEqual({ error: [REFUSAL] });
    expect(await run({ query: '{ me { id } }', variables: {} })).toEqual({ data: { me: { id: agent.id } }, extensions: expect.any(Object) });
  });

  it('over graphql-sse: a request error, as for any document that does not validate', async () => {
    const client = createSseClient({ url: `http://${base}${GRAPHQL_SSE_PATH}`, headers: { authorization: `Bearer ${agent.token}` }, retryAttempts: 0 });
    sseClients.push(client);
    for (const operation of CONDITIONED) {
      const events = client.iterate(operation);
      const { value } = await events.next();
      await events.return?.();
      expect(value).toEqual({ errors: [REFUSAL] });
    }
  });
});
