import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { MeDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../harness.js';

describe('GraphQL over WebSocket (graphql-ws) on /graphql', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let url: string;
  const clients: Client[] = [];

  const connect = (connectionParams: Record<string, string>) => {
    const client = createClient({ url, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
    clients.push(client);
    return client;
  };

  const run = (client: Client) =>
    new Promise<{ data?: unknown; errors?: readonly { message: string; extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
      let result: unknown;
      client.subscribe(
        { query: print(MeDocument) },
        { next: (value) => (result = value), error: reject, complete: () => resolve(result as never) },
      );
    });

  beforeAll(async () => {
    t = await startTestApp();
    root = await bootstrapAgent(t, 'ws-root');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    url = `ws://127.0.0.1:${address.port}/graphql`;
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await t.close();
  });

  it('authenticates with connectionParams.authorization', async () => {
    const result = await run(connect({ authorization: `Bearer ${root.token}` }));
    expect(result).toMatchObject({ data: { me: { id: root.id, name: 'ws-root' } } });
  });

  it('authenticates with connectionParams x-api-key', async () => {
    const result = await run(connect({ 'x-api-key': root.token }));
    expect(result).toMatchObject({ data: { me: { id: root.id } } });
  });

  it('answers unauthorized with the REST code for a bad token', async () => {
    const result = await run(connect({ authorization: 'Bearer agt_wrong' }));
    expect(result.errors?.[0]?.extensions).toEqual({ code: 'unauthorized' });
  });

  it('refuses WebSocket upgrades on other paths', async () => {
    const socket = new WebSocket(url.replace('/graphql', '/elsewhere'), 'graphql-transport-ws');
    const outcome = await new Promise<string>((resolve) => {
      socket.on('open', () => resolve('open'));
      socket.on('error', () => resolve('error'));
    });
    expect(outcome).toBe('error');
  });
});
