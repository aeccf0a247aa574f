import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, type Client } from 'graphql-ws';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { ECHO_LIMITS } from '../../../src/platform/echo.js';
import { GRAPHQL_LIMITS } from '../../../src/platform/graphql/limits.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn, submitTool, type SignedInUser } from '../../factories/users.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Inputs that reached PostgreSQL unbounded (a schema-driven fuzzer's only 500s), and error answers that
 * repeated whole inputs. Every input is refused before SQL, and an error answer stays small whatever it quotes.
 */
const ERROR_ANSWER_MAX_BYTES = 16 * 1024;

interface GraphQLAnswer {
  data?: unknown;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}

describe('hostile input at the edges', () => {
  let t: TestApp;
  const mailbox = new Mailbox();
  let root: AgentWithToken;
  let user: SignedInUser;
  let wsUrl: string;
  const clients: Client[] = [];

  const tables = async () =>
    (await t.query<{ counts: string }>(`select (select count(*) from agents) || ',' || (select count(*) from tools) as counts`))[0]!.counts;
  const graphql = (query: string, variables?: Record<string, unknown>, token = root.token) =>
    t.rest({ method: 'POST', url: '/graphql', headers: bearer(token), payload: { query, ...(variables ? { variables } : {}) } });
  /** One operation over graphql-ws: its result, or the errors it was refused with. */
  const overWebSocket = (query: string, variables?: Record<string, unknown>) => {
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${root.token}` }, retryAttempts: 0, lazy: true });
    clients.push(client);
    return new Promise<GraphQLAnswer>((resolve, reject) => {
      let result: GraphQLAnswer = {};
      client.subscribe(
        { query, ...(variables ? { variables } : {}) },
        {
          next: (value) => (result = value as GraphQLAnswer),
          error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error instanceof Error ? error : new Error(String(error)))),
          complete: () => resolve(result),
        },
      );
    });
  };

  beforeAll(async () => {
    t = await startTestApp({ mailer: mailbox, jobs: false });
    root = await bootstrapAgent(t);
    user = await signIn(t, mailbox);
    await submitTool(t, user);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    wsUrl = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await t.close();
  });

  describe('U+0000 never reaches SQL', () => {
    it('refuses it in a string literal of a GraphQL document, over HTTP and WebSocket, writing nothing', async () => {
      const before = await tables();
      const createAgentInline = 'mutation { createAgent(input: {name: "a\\u0000b"}) { publicToken } }';
      const submitToolInline = 'mutation { submitTool(input: {name: "a\\u0000b", url: "https://nul.example.com", description: "d", categoryId: 1}) { id } }';
      for (const response of [await graphql(createAgentInline), await graphql(submitToolInline, undefined, user.token)]) {
        expect(response.statusCode).toBe(400);
        expect(response.json<GraphQLAnswer>().errors).toEqual([
          expect.objectContaining({ message: expect.stringContaining('U+0000'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
        ]);
      }
      // In a default value and an argument of a read too: every literal, not only a mutation's input.
      expect((await graphql('query($c: String = "a\\u0000") { tools(category: $c) { page } }')).statusCode).toBe(400);
      const overSocket = await overWebSocket(createAgentInline);
      expect(overSocket.errors?.[0]?.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
      expect(await tables()).toBe(before);
    });

    it('refuses it in variables sent in a GET query string or a WebSocket message, naming where', async () => {
      const before = await tables();
      const query = encodeURIComponent('query($c: String) { tools(category: $c) { page } }');
      const get = await t.rest({ method: 'GET', url: `/graphql?query=${query}&variables=${encodeURIComponent('{"c":"a\\u0000"}')}` });
      expect(get.statusCode).toBe(400);
      expect(get.json<GraphQLAnswer>().errors).toEqual([{ message: expect.stringContaining('"$c" at "c"'), extensions: { code: 'BAD_USER_INPUT' } }]);
      const overSocket = await overWebSocket('mutation($input: CreateAgentInput!) { createAgent(input: $input) { publicToken } }', {
        input: { name: 'ok', metadata: { note: ['fine', 'a\u0000b'] } },
      });
      expect(overSocket.errors).toEqual([{ message: expect.stringContaining('"input.metadata.note.1"'), extensions: { code: 'BAD_USER_INPUT' } }]);
      expect(await tables()).toBe(before);
    });

    it('refuses %00 in a REST query parameter, naming it', async () => {
      const response = await t.rest({ method: 'GET', url: '/api/tools?category=ab%00' });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ success: false, message: expect.stringContaining('U+0000'), errors: { category: 'must not contain the character U+0000' } });
    });
  });

  it('refuses an empty string where an id or a cursor belongs, as it refuses any other non-id', async () => {
    const child = await createAgent(t, root);
    await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(root.token), payload: { url: 'https://hooks.example.com/x' } });
    const answers = {
      children: await graphql('{ me { children(after: "") { id } } }'),
      bookings: await graphql('{ bookings(after: "") { edges { cursor } } }'),
      availability: await graphql(`{ availability(agentIds: ["${child.id}"], from: "2035-01-01T00:00:00Z", to: "2035-01-02T00:00:00Z", duration: 30, after: "") { pageInfo { hasNextPage } } }`),
      webhookDeliveries: await graphql('{ webhookDeliveries(webhookId: "") { id } }'),
    };
    const codes = Object.fromEntries(Object.entries(answers).map(([field, response]) => [field, response.json<GraphQLAnswer>().errors?.map((error) => error.extensions?.code)]));
    expect(codes).toEqual({ children: ['validation'], bookings: ['validation'], availability: ['validation'], webhookDeliveries: ['not_found'] });
    expect(answers.children.json<GraphQLAnswer>().errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { after: 'is not the id of an agent' } });
  });

  describe('page is bounded in REST and GraphQL alike', () => {
    it.each(['votes', 'newest', 'trending'])('sort=%s: page 10,000 answers, 10,001 and numbers past every integer range are refused naming page', async (sort) => {
      expect((await t.rest({ method: 'GET', url: `/api/tools?sort=${sort}&page=10000&limit=100` })).json()).toMatchObject({ success: true, page: 10_000, tools: [] });
      for (const page of ['10001', '1e17', '9007199254740993', '1.15e23', '18446744073709551616']) {
        const response = await t.rest({ method: 'GET', url: `/api/tools?sort=${sort}&page=${page}&limit=100` });
        expect([page, response.statusCode, Object.keys(response.json().errors ?? {})]).toEqual([page, 400, ['page']]);
      }
      const graphqlSort = sort;
      expect((await graphql(`{ tools(sort: ${graphqlSort}, page: 10000, limit: 100) { page } }`)).json<GraphQLAnswer>().data).toEqual({ tools: { page: 10_000 } });
      const over = (await graphql(`{ tools(sort: ${graphqlSort}, page: 10001, limit: 100) { page } }`)).json<GraphQLAnswer>();
      expect(over.errors?.[0]?.extensions).toEqual({ code: 'validation', errors: { page: 'must be at most 10000' } });
    });
  });

  it('reads a tool id in a path as its decimal digits: 1.0, 0x1 and 9007199254740993 name no tool', async () => {
    const tool = await submitTool(t, user);
    expect((await t.rest({ method: 'GET', url: `/api/tools/${tool.id}` })).statusCode).toBe(200);
    for (const spelling of [`${tool.id}.0`, `0x${tool.id.toString(16)}`, `${tool.id}e0`, '9007199254740993']) {
      const response = await t.rest({ method: 'GET', url: `/api/tools/${spelling}` });
      expect([spelling, response.statusCode, response.json().message]).toEqual([spelling, 404, `no tool ${spelling}`]);
    }
  });

  describe('an error answer quotes a bounded prefix of the input', () => {
    const quotedPrefix = (text: string) => `${text.slice(0, ECHO_LIMITS.quotedChars)}…`;

    it('tools(category:) with a 900 KB argument, quoted in the message and the field map, answers a short error', async () => {
      const category = 'x'.repeat(900_000);
      const response = await graphql(`{ tools(category: "${category}") { page } }`);
      expect(response.body.length).toBeLessThan(ERROR_ANSWER_MAX_BYTES);
      expect(response.json<GraphQLAnswer>().errors).toEqual([
        expect.objectContaining({
          message: `category ${quotedPrefix(category)} is not a category slug`,
          extensions: { code: 'validation', errors: { category: `${quotedPrefix(category)} is not a category slug` } },
        }),
      ]);
      const rest = await t.rest({ method: 'GET', url: `/api/tools?category=${category}` });
      expect([rest.statusCode, rest.body.length < ERROR_ANSWER_MAX_BYTES]).toEqual([400, true]);
    });

    it('bounds graphql-js’s own messages, which quote the value they could not coerce', async () => {
      const response = await graphql('mutation($x: Int!) { toggleVote(toolId: $x) { voted } }', { x: '9'.repeat(900_000) }, user.token);
      expect(response.statusCode).toBe(400);
      expect(response.body.length).toBeLessThan(ERROR_ANSWER_MAX_BYTES);
      expect(response.json<GraphQLAnswer>().errors).toEqual([{ message: expect.stringContaining(quotedPrefix('9'.repeat(100))), extensions: { code: 'BAD_USER_INPUT' }, locations: expect.any(Array) }]);
    });

    it('refuses a name longer than 128 characters (an alias is repeated in the answer), and takes one of 128', async () => {
      expect((await graphql(`{ ${'a'.repeat(GRAPHQL_LIMITS.maxNameLength)}: __typename }`)).json<GraphQLAnswer>().data).toEqual({ ['a'.repeat(GRAPHQL_LIMITS.maxNameLength)]: 'Query' });
      const longer = await graphql(`{ ${'a'.repeat(900_000)}: __typename }`);
      expect(longer.statusCode).toBe(400);
      expect(longer.body.length).toBeLessThan(ERROR_ANSWER_MAX_BYTES);
      expect((await graphql(`{ ${'a'.repeat(GRAPHQL_LIMITS.maxNameLength + 1)}: __typename }`)).json<GraphQLAnswer>().errors?.[0]?.message).toBe('A name is longer than 128 characters.');
    });

    it('answers at most 20 errors, over HTTP and WebSocket, the last saying how many more there were, all BAD_USER_INPUT for variables', async () => {
      const unknownFields = await graphql(`{ ${Array.from({ length: 300 }, (_, n) => `f${n}`).join(' ')} }`);
      expect(unknownFields.json<GraphQLAnswer>().errors).toHaveLength(GRAPHQL_LIMITS.maxErrorsPerAnswer);
      const query = 'query($ids: [ID!]!) { availability(agentIds: $ids, from: "2035-01-01T00:00:00Z", to: "2035-01-02T00:00:00Z", duration: 30) { pageInfo { hasNextPage } } }';
      for (const answer of [(await graphql(query, { ids: Array(1_000).fill(null) })).json<GraphQLAnswer>(), await overWebSocket(query, { ids: Array(1_000).fill(null) })]) {
        expect(answer.errors).toHaveLength(GRAPHQL_LIMITS.maxErrorsPerAnswer);
        // Over graphql-ws these were INTERNAL_SERVER_ERROR (and logged as errors): graphql-js wraps its own coercion error.
        expect(new Set(answer.errors!.map((error) => error.extensions?.code))).toEqual(new Set(['BAD_USER_INPUT']));
        expect(answer.errors!.at(-1)).toEqual({ message: expect.stringMatching(/^\d+ more errors; only the first 19 are shown\.$/), extensions: { code: 'BAD_USER_INPUT' } });
        expect(JSON.stringify(answer).length).toBeLessThan(ERROR_ANSWER_MAX_BYTES);
      }
    });

    it('names at most 20 fields in a REST validation error, each name and message bounded', async () => {
      const longName = await t.rest({ method: 'POST', url: '/api/agents', headers: bearer(root.token), payload: { name: 'x', ['k'.repeat(100_000)]: 1 } });
      expect(longName.statusCode).toBe(400);
      expect(longName.json()).toEqual({ errors: { [`${'k'.repeat(ECHO_LIMITS.fieldNameChars)}…`]: 'is not allowed' } });
      const manyNames = await t.rest({
        method: 'POST',
        url: '/api/agents',
        headers: bearer(root.token),
        payload: Object.fromEntries([['name', 'x'], ...Array.from({ length: 5_000 }, (_, n) => [`extra${n}`, 1])]),
      });
      expect(Object.keys(manyNames.json().errors)).toHaveLength(ECHO_LIMITS.fields);
      const longQuery = await t.rest({ method: 'GET', url: `/api/tools?category=${'y'.repeat(15_000)}` });
      expect(longQuery.statusCode).toBe(400);
      expect(longQuery.body.length).toBeLessThan(1_000);
    });
  });
});
