import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { getOperationAST, parse, print, type DocumentNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import * as consoleDocuments from '../../../src/web/generated/console/graphql.js';
import { PricesPageDocument } from '../../../src/web/generated/pages/graphql.js';
import { documentHash } from '../../../src/platform/graphql/trusted-documents.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { hourSlot } from '../../factories/bookings.js';
import { bearer, startTestApp, type TestApp, withoutCost } from '../../harness.js';

/** The console's generated documents by operation name: their GraphQL documents and the ids the build published. */
const consoleOperations = new Map<string, { document: DocumentNode; documentId: string }>();
for (const value of Object.values(consoleDocuments)) {
  const meta = (value as { __meta__?: { hash?: string } }).__meta__;
  if (!(value instanceof consoleDocuments.TypedDocumentString) || !meta?.hash) continue;
  const document = parse(value.toString());
  consoleOperations.set(getOperationAST(document)!.name!.value, { document, documentId: meta.hash });
}
const consoleDocument = (name: string) => consoleOperations.get(name)!.document;

const listen = async (t: TestApp) => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
};

describe('trusted documents, every caller restricted (GRAPHQL_TRUSTED_DOCUMENTS_ONLY=anonymous,agents,users)', () => {
  let t: TestApp;
  let base: string;
  let agent: AgentWithToken;
  const sentBodies: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: { GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'anonymous,agents,users' } });
    agent = await bootstrapAgent(t, 'console-user');
    base = await listen(t);
  });
  afterAll(() => t.close());

  /**
   * Apollo Client 4 with its persisted-queries link: the hash of each of the console's documents is
   * the id the build published (`__meta__.hash`), and the link sends only that hash, never the text.
   * The server runs the published text, which (as the console's page wants it) selects no __typename:
   * Apollo's normalized cache matches fragments by __typename, so answers go to the caller as they came.
   */
  const apolloClient = (token: string) =>
    new ApolloClient({
      cache: new InMemoryCache(),
      defaultOptions: { query: { fetchPolicy: 'no-cache' }, mutate: { fetchPolicy: 'no-cache' } },
      link: new PersistedQueryLink({
        generateHash: (document) => consoleOperations.get(getOperationAST(document)!.name!.value)!.documentId.slice('sha256:'.length),
        useGETForHashedQueries: true,
      }).concat(
        new HttpLink({
          uri: `${base}/graphql`,
          headers: bearer(token),
          fetch: async (input, init) => {
            sentBodies.push(`${String(input)} ${typeof init?.body === 'string' ? init.body : ''}`);
            return fetch(input, init);
          },
        }),
      ),
    });

  it("runs the /console's documents from Apollo Client by their id only: no document text leaves the client", async () => {
    const client = apolloClient(agent.token);
    const me = await client.query({ query: consoleDocument('ConsoleMe') });
    expect(me.data).toMatchObject({ me: { id: agent.id, name: 'console-user', parent: null } });

    const slot = hourSlot('2033-05-02T09:00:00Z', 0);
    const preview = await client.query({ query: consoleDocument('PreviewNewBooking'), variables: { input: { agentId: agent.id, ...slot } } });
    expect(preview.data).toMatchObject({ previewBooking: { available: true, conflicts: [] } });
    const created = await client.mutate({ mutation: consoleDocument('CreateConsoleBooking'), variables: { input: { agentId: agent.id, ...slot } } });
    const booking = (created.data as { createBooking: { id: string; status: string } }).createBooking;
    expect(booking.status).toBe('confirmed');
    const week = await client.query({ query: consoleDocument('WeekSlots'), variables: { from: '2033-05-01T00:00:00Z', to: '2033-05-08T00:00:00Z' } });
    expect(week.data).toMatchObject({ bookedSlots: [{ booking: { id: booking.id } }] });
    await client.mutate({ mutation: consoleDocument('CancelConsoleBooking'), variables: { id: booking.id } });
    const children = await client.query({ query: consoleDocument('ConsoleChildren') });
    expect(children.data).toMatchObject({ me: { children: [] } });

    expect(sentBodies.length).toBeGreaterThanOrEqual(6);
    for (const sent of sentBodies) {
      expect(sent).toContain('persistedQuery');
      expect(sent).not.toMatch(/query=|"query"/);
    }
  });

  it('refuses any other document with trusted_document_required, for every kind of caller, before running it', async () => {
    const other = { query: '{ me { id name } }' };
    const asAgent = await t.rest({ method: 'POST', url: '/graphql', headers: { ...bearer(agent.token), accept: 'application/graphql-response+json' }, payload: other });
    expect(asAgent.statusCode).toBe(403);
    expect(asAgent.json()).toEqual({ errors: [{ message: expect.stringContaining('trusted documents'), extensions: { code: 'trusted_document_required' } }] });
    const anonymous = await t.rest({ method: 'POST', url: '/graphql', payload: { query: '{ gpuPrices { slug } }' } });
    expect(anonymous.json().errors[0].extensions.code).toBe('trusted_document_required');
    // A forged token is no agent: the caller is anonymous, and restricted as such.
    const forged = await t.rest({ method: 'POST', url: '/graphql', headers: bearer('agt_forged'), payload: other });
    expect(forged.json().errors[0].extensions.code).toBe('trusted_document_required');
    // A client reading only application/json gets the refusal with a 200 (GraphQL over HTTP).
    const legacy = await t.rest({ method: 'POST', url: '/graphql', headers: { ...bearer(agent.token), accept: 'application/json' }, payload: other });
    expect(legacy.statusCode).toBe(200);
    // Registering a text through automatic persisted queries is no way around it.
    const apq = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: bearer(agent.token),
      payload: { ...other, extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(other.query) } } },
    });
    expect(apq.json().errors[0].extensions.code).toBe('trusted_document_required');
  });

  it("accepts a trusted document's text however it is printed (the console's graphql-ws subscription sends its generated text)", async () => {
    const text = consoleDocuments.ConsoleMeDocument.toString();
    expect(text).not.toBe(print(parse(text)));
    const sent = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query: text } });
    expect(sent.json()).toMatchObject({ data: { me: { id: agent.id } } });

    const url = `${base.replace('http', 'ws')}/graphql`;
    const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${agent.token}` }, retryAttempts: 0 });
    try {
      const subscribe = (query: string) =>
        new Promise<unknown>((resolve) => {
          const stop = client.subscribe(
            { query, variables: {} },
            {
              next: (value) => (stop(), resolve(value)),
              error: (error) => resolve({ error }),
              complete: () => undefined,
            },
          );
        });
      const refused = (await subscribe('subscription { bookingEvents { cursor } }')) as { error: { extensions?: { code?: string } }[] };
      expect(refused.error[0]!.extensions).toEqual({ code: 'trusted_document_required' });
      const live = subscribe(consoleDocuments.ConsoleBookingEventsDocument.toString());
      // Subscribed: a booking made now arrives as its event.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const slot = hourSlot('2033-06-02T09:00:00Z', 0);
      await t.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, ...slot } });
      expect(await live).toMatchObject({ data: { bookingEvents: { type: 'booking.created', booking: { startsAt: '2033-06-02T09:00:00.000Z' } } } });
    } finally {
      await client.dispose();
    }
  });
});

describe('persisted documents over HTTP (GraphQL over HTTP, Appendix A), no restriction', () => {
  let t: TestApp;
  let agent: AgentWithToken;
  const pricesId = (PricesPageDocument as unknown as { __meta__: { hash: string } }).__meta__.hash;
  const meId = consoleOperations.get('ConsoleMe')!.documentId;
  const createId = consoleOperations.get('CreateConsoleBooking')!.documentId;

  beforeAll(async () => {
    t = await startTestApp({ env: { GRAPHQL_JIT: '2', METRICS_TOKEN: 'metrics-token-for-tests-0123456789' } });
    agent = await bootstrapAgent(t, 'persisted');
  });
  afterAll(() => t.close());

  it('answers GET with a documentId, public price reads cacheable by anyone and agent data private, no-store', async () => {
    const prices = await t.rest({ method: 'GET', url: `/graphql?documentId=${pricesId}` });
    expect(prices.statusCode).toBe(200);
    expect(prices.headers['cache-control']).toBe('public, max-age=60');
    expect(prices.json().data.gpuPrices.length).toBeGreaterThan(0);
    const me = await t.rest({ method: 'GET', url: `/graphql?documentId=${meId}`, headers: bearer(agent.token) });
    expect(me.json()).toMatchObject({ data: { me: { id: agent.id } } });
    expect(me.headers['cache-control']).toBe('private, no-store');
    // The same by POST.
    const posted = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { documentId: meId } });
    expect(withoutCost(posted.json())).toEqual(withoutCost(me.json()));
  });

  it('refuses a mutation over GET with 405 and runs it by POST', async () => {
    const variables = JSON.stringify({ input: { agentId: agent.id, ...hourSlot('2033-07-01T10:00:00Z', 0) } });
    const overGet = await t.rest({ method: 'GET', url: `/graphql?documentId=${createId}&variables=${encodeURIComponent(variables)}` });
    expect(overGet.statusCode).toBe(405);
    const overPost = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { documentId: createId, variables: JSON.parse(variables) } });
    expect(overPost.json()).toMatchObject({ data: { createBooking: { status: 'confirmed' } } });
    expect(overPost.headers['cache-control']).toBe('private, no-store');
  });

  it('answers an unknown documentId with persisted_document_not_found, and a malformed request with validation naming documentId', async () => {
    const unknown = `sha256:${'0'.repeat(64)}`;
    const posted = await t.rest({ method: 'POST', url: '/graphql', headers: { accept: 'application/graphql-response+json' }, payload: { documentId: unknown } });
    expect(posted.statusCode).toBe(404);
    expect(posted.json()).toEqual({ errors: [{ message: expect.stringContaining(unknown), extensions: { code: 'persisted_document_not_found' } }] });
    const overGet = await t.rest({ method: 'GET', url: `/graphql?documentId=md5:abc` });
    expect(overGet.json().errors[0].extensions.code).toBe('persisted_document_not_found');
    const both = await t.rest({ method: 'POST', url: '/graphql', payload: { documentId: meId, query: '{ __typename }' } });
    expect(both.statusCode).toBe(400);
    expect(both.json().errors[0].extensions).toEqual({ code: 'validation', errors: { documentId: expect.stringContaining('query') } });
    const notText = await t.rest({ method: 'POST', url: '/graphql', payload: { documentId: 7 } });
    expect(notText.json().errors[0].extensions).toEqual({ code: 'validation', errors: { documentId: 'must be a string' } });
  });

  it("runs a trusted document compiled from its first request: planned at start, Apollo's automatic persisted queries know it by hash", async () => {
    const executions = async () => {
      const text = (await t.rest({ method: 'GET', url: '/metrics', headers: bearer('metrics-token-for-tests-0123456789') })).body;
      return Number(/gateway_graphql_executions_total\{engine="compiled"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await executions();
    const chargesId = consoleOperations.get('ConsoleFeeds')!.documentId;
    const first = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { documentId: chargesId } });
    expect(withoutCost(first.json())).toEqual({ data: { calendarFeeds: [] } });
    expect(await executions()).toBe(before + 1);
    const byHash = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: bearer(agent.token),
      payload: { extensions: { persistedQuery: { version: 1, sha256Hash: chargesId.slice('sha256:'.length) } } },
    });
    expect(withoutCost(byHash.json())).toEqual(withoutCost(first.json()));
    // Other documents keep Apollo's automatic persisted queries: unknown hash first, then registered.
    const query = '{ me { name } }';
    const hashOnly = { extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(query) } } };
    const notYet = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: hashOnly });
    expect(notYet.json().errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query, ...hashOnly } });
    const registered = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: hashOnly });
    expect(withoutCost(registered.json())).toEqual({ data: { me: { name: 'persisted' } } });
  });

  it('restricts only the kinds of caller named: agents free, anonymous callers held to trusted documents', async () => {
    const restricted = await startTestApp({ databaseUrl: t.databaseUrl, jobs: false, env: { GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'anonymous' } });
    try {
      const child = await createAgent(restricted, agent, 'child-of-persisted');
      const asAgent = await restricted.rest({ method: 'POST', url: '/graphql', headers: bearer(child.token), payload: { query: '{ me { name } }' } });
      expect(withoutCost(asAgent.json())).toEqual({ data: { me: { name: 'child-of-persisted' } } });
      const anonymous = await restricted.rest({ method: 'POST', url: '/graphql', payload: { query: '{ gpuPrices { slug } }' } });
      expect(anonymous.json().errors[0].extensions.code).toBe('trusted_document_required');
      const trusted = await restricted.rest({ method: 'GET', url: `/graphql?documentId=${pricesId}` });
      expect(trusted.json().data.gpuPrices.length).toBeGreaterThan(0);
    } finally {
      await restricted.close();
    }
  });
});
