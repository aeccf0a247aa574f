import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import { PricesPageDocument } from '../../../src/web/generated/pages/graphql.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

/** One request as a client sends it: who, what, and the headers it adds. */
interface Case {
  readonly name: string;
  readonly body: () => Record<string, unknown>;
  readonly headers: () => Record<string, string>;
  /** Whether the direct path answers it once it knows the text (else Apollo answers, or hands it over). */
  readonly direct: boolean;
}

/**
 * What a client sees of an answer: status, headers and the body's bytes, but for what no two requests
 * share: the request id, the date, and a write's consistency token (a WAL position: present or not).
 */
function seen(response: LightMyRequestResponse): { status: number; headers: Record<string, unknown>; body: string } {
  const { 'x-request-id': _id, date: _date, ...headers } = response.headers;
  if (headers['x-consistency-token'] !== undefined) headers['x-consistency-token'] = '(a WAL position)';
  return { status: response.statusCode, headers, body: response.body.replace(/"consistencyToken":"[^"]+"/g, '"consistencyToken":"(a WAL position)"') };
}

const post = (t: TestApp, body: Record<string, unknown>, headers: Record<string, string>) =>
  t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: body });

const countersOf = async (t: TestApp) => {
  const text = (await t.rest({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) })).body;
  const answers = (by: string) => Number(new RegExp(`gateway_graphql_http_answers_total\\{by="${by}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  // Operation metrics: how many operations each name and outcome counted (the durations differ).
  const operations = text
    .split('\n')
    .filter((line) => line.startsWith('gateway_graphql_operation_duration_seconds_count'))
    .sort();
  return { direct: answers('direct'), apollo: answers('apollo'), operations };
};

/**
 * GraphQL over HTTP answers a POSTed query whose text it knows without Apollo Server's pipeline
 * (http-fast-path.ts). These tests send the same requests to two servers on one database, one with the
 * direct path and one without it (GRAPHQL_HTTP_DIRECT=off), and compare what a client gets byte for byte:
 * successes, answers with errors (handed to Apollo with their result), variables that do not coerce, a
 * refusal for a document not trusted, and, with a budget, a refusal over budget.
 */
describe('GraphQL over HTTP: the direct path answers as Apollo Server does', () => {
  let direct: TestApp;
  let apollo: TestApp;
  let owner: AgentWithToken;
  let stranger: AgentWithToken;
  let bookingId: string;

  beforeAll(async () => {
    // Costs reported, not enforced: an answer's `extensions.cost` then holds no budget, which each process counts its own way.
    const env = { METRICS_TOKEN, GRAPHQL_COST_PER_MIN: '0', GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'anonymous' };
    direct = await startTestApp({ jobs: false, env });
    owner = await bootstrapAgent(direct, 'owner');
    stranger = await createAgent(direct, owner, 'stranger');
    await createAgent(direct, owner, 'child');
    for (let i = 0; i < 12; i++) {
      const slot = hourSlot('2031-03-03T08:00:00Z', i * 2);
      bookingId ??= (await createBooking(direct, owner, slot.startsAt, slot.endsAt)).id;
    }
    apollo = await startTestApp({ databaseUrl: direct.databaseUrl, jobs: false, env: { ...env, GRAPHQL_HTTP_DIRECT: 'off' } });
  }, 60_000);
  afterAll(async () => {
    await apollo.close();
    await direct.close();
  });

  const page = '{ bookings(from: "2031-03-01T00:00:00Z", to: "2031-04-01T00:00:00Z", first: 10) { edges { node { id startsAt endsAt status agent { id name } } } } }';
  const cases: Case[] = [
    { name: 'a page of bookings with their agent (bench S3)', body: () => ({ query: page }), headers: () => bearer(owner.token), direct: true },
    {
      name: 'the same, for a client that reads application/graphql-response+json',
      body: () => ({ query: page }),
      headers: () => ({ ...bearer(owner.token), accept: 'application/graphql-response+json' }),
      direct: true,
    },
    {
      name: 'an operation by name, with variables and fragments',
      body: () => ({
        query: 'query Me($first: Int) { me { ...A children(first: $first) { ...A } } } query Other { me { id } } fragment A on Agent { id name createdAt }',
        variables: { first: 5 },
        operationName: 'Me',
      }),
      headers: () => bearer(owner.token),
      direct: true,
    },
    { name: 'a public answer (Cache-Control public, max-age), as the trusted text', body: () => ({ query: PricesPageDocument.toString() }), headers: () => ({}), direct: true },
    { name: 'the same trusted document by its id', body: () => ({ documentId: PricesPageDocument.__meta__!.hash }), headers: () => ({}), direct: true },
    { name: "another agent's booking: data and an error with its path", body: () => ({ query: `{ booking(id: "${bookingId}") { id } me { id } }` }), headers: () => bearer(stranger.token), direct: false },
    { name: 'a service refusing an argument (validation, with its field map)', body: () => ({ query: '{ bookings(first: 0) { edges { node { id } } } }' }), headers: () => bearer(owner.token), direct: false },
    {
      name: 'a variable that does not coerce (400, BAD_USER_INPUT)',
      body: () => ({ query: 'query ($from: DateTimeISO!) { freeBusy(from: $from, to: $from) { busy { startsAt } } }', variables: { from: '2031-03-03 08:00' } }),
      headers: () => bearer(owner.token),
      direct: false,
    },
    {
      name: 'the same for a client that reads application/json only (200)',
      body: () => ({ query: 'query ($from: DateTimeISO!) { freeBusy(from: $from, to: $from) { busy { startsAt } } }', variables: { from: '2031-03-03 08:00' } }),
      headers: () => ({ ...bearer(owner.token), accept: 'application/json' }),
      direct: false,
    },
    { name: 'a variable of the wrong type', body: () => ({ query: 'query ($first: Int) { bookings(first: $first) { edges { cursor } } }', variables: { first: 'ten' } }), headers: () => bearer(owner.token), direct: false },
    { name: 'a document that does not validate', body: () => ({ query: '{ me { nope } }' }), headers: () => bearer(owner.token), direct: false },
    { name: 'a text not trusted, from a caller held to trusted documents', body: () => ({ query: '{ gpuPrices { slug } }' }), headers: () => ({}), direct: false },
    { name: 'a mutation (always through Apollo)', body: () => ({ query: 'mutation { cancelBooking(id: "00000000-0000-4000-8000-000000000000") { id } }' }), headers: () => bearer(owner.token), direct: false },
  ];

  it.each(cases)('$name: the same status, headers and bytes', async ({ body, headers, direct: answeredDirectly }) => {
    // The first request of a text (and of an Accept value) teaches the direct path; the second is compared.
    for (const t of [direct, apollo]) await post(t, body(), headers());
    const before = await countersOf(direct);
    direct.sql.reset();
    apollo.sql.reset();
    const [fromDirect, fromApollo] = [seen(await post(direct, body(), headers())), seen(await post(apollo, body(), headers()))];
    expect(fromDirect).toEqual(fromApollo);
    // Run once either way: an answer with errors is handed to Apollo with its result, not run again.
    expect(direct.sql.statements).toEqual(apollo.sql.statements);
    const after = await countersOf(direct);
    expect(after.direct - before.direct).toBe(answeredDirectly ? 1 : 0);
  });

  it('counts every operation the same way (operation metrics), and only the server with the direct path answers directly', async () => {
    const [withDirect, without] = [await countersOf(direct), await countersOf(apollo)];
    expect(withDirect.operations).toEqual(without.operations);
    expect(withDirect.operations.length).toBeGreaterThan(0);
    expect(withDirect.direct).toBeGreaterThanOrEqual(cases.filter((c) => c.direct).length);
    expect(without.direct).toBe(0);
    expect(without.apollo).toBe(0); // with the direct path off, the counter is not kept
  });
});

describe('GraphQL over HTTP with a cost budget: the direct path charges and refuses as Apollo Server does', () => {
  let direct: TestApp;
  let apollo: TestApp;
  const callers = new Map<TestApp, AgentWithToken>();

  beforeAll(async () => {
    const env = { METRICS_TOKEN, GRAPHQL_COST_PER_MIN: '100' };
    direct = await startTestApp({ jobs: false, env });
    const root = await bootstrapAgent(direct, 'root');
    apollo = await startTestApp({ databaseUrl: direct.databaseUrl, jobs: false, env: { ...env, GRAPHQL_HTTP_DIRECT: 'off' } });
    // A caller of its own on each server: each answer reports what is left of that caller's budget.
    for (const t of [direct, apollo]) {
      const caller = await createAgent(direct, root);
      const slot = hourSlot('2031-05-05T08:00:00Z', 0);
      await createBooking(direct, caller, slot.startsAt, slot.endsAt);
      callers.set(t, caller);
    }
  }, 60_000);
  afterAll(async () => {
    await apollo.close();
    await direct.close();
  });

  it('charges a page within the budget and reports what is left; refuses one estimated over it (429, Retry-After), byte for byte', async () => {
    const within = { query: '{ bookings(from: "2031-05-01T00:00:00Z", to: "2031-06-01T00:00:00Z", first: 5) { edges { node { id agent { id } } } } }' };
    const over = { query: '{ bookings(from: "2031-05-01T00:00:00Z", to: "2031-06-01T00:00:00Z", first: 50) { edges { node { id agent { id } } } } }' };
    const answers = new Map<TestApp, ReturnType<typeof seen>[]>();
    const before = await countersOf(direct);
    for (const t of [direct, apollo]) {
      const caller = callers.get(t)!;
      const sent: ReturnType<typeof seen>[] = [];
      for (const body of [within, over, within, over]) sent.push(seen(await post(t, body, bearer(caller.token))));
      answers.set(t, sent);
    }
    // The bookings' ids differ (each caller has its own); everything else, budget figures included, is the same.
    const sameIds = (answer: ReturnType<typeof seen>) => ({ ...answer, body: answer.body.replace(/"id":"[^"]+"/g, '"id":"…"') });
    expect(answers.get(direct)!.map(sameIds)).toEqual(answers.get(apollo)!.map(sameIds));
    expect(answers.get(direct)![3]!.status).toBe(429);
    expect(answers.get(direct)![3]!.headers['retry-after']).toBeDefined();
    expect(JSON.parse(answers.get(direct)![2]!.body).extensions.cost.budget.remaining).toBeLessThan(100);
    // The second of each was known: the page answered directly, the refusal handed over to Apollo.
    expect((await countersOf(direct)).direct - before.direct).toBe(1);
  });
});
