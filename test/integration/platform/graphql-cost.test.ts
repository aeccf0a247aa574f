import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { sha256Hex } from '../../../src/platform/auth/credentials.js';
import { freePort } from '../../../src/platform/db/embedded-postgres.js';
import { LOCAL_SHARE_OF_BUDGET } from '../../../src/platform/graphql/cost-budget.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { startServer, waitFor, type RunningServer } from '../../factories/server-process.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/** A page of up to 50 bookings with their agent: estimated 1 + 50 × (edge + node + agent) = 151. */
const PAGE = '{ bookings(from: "2034-01-01T00:00:00Z", to: "2034-02-01T00:00:00Z", first: 50) { edges { node { id startsAt agent { id name } } } } }';
const PAGE_ESTIMATE = 151;
/** Estimated at bookedSlots' assumed size, 2,000 slots (a day holds none here): more than the whole budget below. */
const SLOTS = '{ bookedSlots(from: "2034-03-01T00:00:00Z", to: "2034-03-02T00:00:00Z") { startsAt } }';
const SLOTS_ESTIMATE = 2_000;
/** A page of 6 bookings with their agent: estimated 1 + 6 × 3 = 19, and as much resolved when 6 rows come. */
const SIX = '{ bookings(from: "2035-01-01T00:00:00Z", to: "2035-02-01T00:00:00Z", first: 6) { edges { node { id startsAt agent { id name } } } } }';
const SIX_COST = 19;
const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

/** What PostgreSQL holds of a caller's GraphQL cost window (points written by every process). */
async function writtenPoints(t: TestApp, token: string): Promise<number | undefined> {
  const rows = await t.query<{ points: number }>('select points from rate_limits where key = $1', [`graphql_cost:${sha256Hex(`credential:${token}`)}`]);
  return rows[0]?.points;
}

/** Waits (up to 10 s) until PostgreSQL holds `points` for the caller: a process writes what it admitted within its reconcile interval. */
async function untilWritten(t: TestApp, token: string, points: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await writtenPoints(t, token)) !== points) {
    if (Date.now() > deadline) throw new Error(`rate_limits holds ${await writtenPoints(t, token)} points for the caller, not ${points}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function counter(metrics: string, series: string): number {
  const line = metrics.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('GraphQL cost: extensions.cost on every answer, a per-caller budget shared by processes', () => {
  let t: TestApp;
  let other: TestApp;
  let agent: AgentWithToken;
  const BUDGET = 1_000;

  beforeAll(async () => {
    t = await startTestApp({ env: { GRAPHQL_COST_PER_MIN: String(BUDGET), METRICS_TOKEN } });
    agent = await bootstrapAgent(t, 'payer');
    for (let i = 0; i < 3; i++) {
      const slot = hourSlot('2034-01-10T08:00:00Z', i * 2);
      await createBooking(t, agent, slot.startsAt, slot.endsAt);
    }
    // A second process on the same database: the budget is one.
    other = await startTestApp({ databaseUrl: t.databaseUrl, jobs: false, env: { GRAPHQL_COST_PER_MIN: String(BUDGET) } });
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  const post = (app: TestApp, query: string, headers: Record<string, string> = bearer(agent.token), remoteAddress?: string) =>
    app.rest({ method: 'POST', url: '/graphql', headers, payload: { query }, ...(remoteAddress ? { remoteAddress } : {}) });

  it('reports the estimate, what was resolved and the budget left, charging only the actual cost (the rest is given back)', async () => {
    const first = await post(t, PAGE);
    expect(first.statusCode).toBe(200);
    // 3 rows came: 1 + 3 × 3.
    expect(first.json().extensions.cost).toEqual({
      estimated: PAGE_ESTIMATE,
      actual: 10,
      budget: { limit: BUDGET, remaining: BUDGET - 10, resetSeconds: expect.any(Number), refillPerMinute: BUDGET },
    });
    expect(first.json().data.bookings.edges).toHaveLength(3);
    // The refund is written after the answer, with the process's next reconciliation: the other process sees it once it landed.
    await untilWritten(t, agent.token, 10);
    const second = await post(other, PAGE);
    expect(second.json().extensions.cost.budget.remaining).toBe(BUDGET - 20);
    // Errors and refusals before execution carry a cost too (nothing charged, so no budget).
    const invalid = await post(t, '{ bookings { nope } }');
    expect(invalid.json().extensions).toEqual({ cost: { estimated: 0, actual: 0 } });
  });

  it('costs @include as execution reads its variables: defaults filled in; a null for its `if` refused before it runs', async () => {
    const payer = await createAgent(t, agent, 'directives');
    for (let i = 0; i < 2; i++) await createBooking(t, payer, hourSlot('2034-01-12T08:00:00Z', i * 2).startsAt, hourSlot('2034-01-12T08:00:00Z', i * 2).endsAt);
    const send = (query: string, variables: Record<string, unknown>) =>
      t.rest({ method: 'POST', url: '/graphql', headers: { ...bearer(payer.token), accept: 'application/graphql-response+json' }, payload: { query, variables } });
    // Left out, the variable is its default: `agent` is included, and counted: 1 + 2 × (edge + node + agent).
    const withAgent = 'query Q($withAgent: Boolean = true) { bookings(first: 10) { edges { node { id agent @include(if: $withAgent) { id } } } } }';
    const defaulted = await send(withAgent, {});
    expect(defaulted.statusCode).toBe(200);
    expect(defaulted.json().data.bookings.edges).toEqual([{ node: { id: expect.any(String), agent: { id: payer.id } } }, { node: { id: expect.any(String), agent: { id: payer.id } } }]);
    expect(defaulted.json().extensions.cost).toMatchObject({ estimated: 1 + 10 * 3, actual: 1 + 2 * 3 });
    // Given false, it is left out, and not counted.
    const without = await send(withAgent, { withAgent: false });
    expect(without.json().extensions.cost).toMatchObject({ estimated: 1 + 10 * 2, actual: 1 + 2 * 2 });
    // An explicit null where `if` may not be one: graphql-js would run the page and answer a field error
    // under it (and a null `data` from there gave the whole estimate back). It cannot be costed, so it is
    // refused as bad input before any SQL, naming the variable, and nothing is charged.
    t.sql.reset();
    const nulled = await send('query Q($withAgent: Boolean = true) { bookings(first: 200) { edges { node { id agent @include(if: $withAgent) { id } } } } }', {
      withAgent: null,
    });
    expect(t.sql.statements).toEqual([]);
    expect(nulled.statusCode).toBe(400);
    expect(nulled.json()).toEqual({
      errors: [{ message: expect.stringContaining('$withAgent must not be null'), extensions: { code: 'validation', errors: { $withAgent: expect.stringContaining('must not be null') } } }],
      extensions: { cost: { estimated: 0, actual: 0 } },
    });
    // The same for an argument of a non-null type (graphql-js would answer a field error after running the page
    // beside it), naming the variable of the operation that runs, not another operation's of the same name.
    const twoOperations = `query WithAgent($id: Boolean = true) { bookings(first: 1) { edges { node { id agent @include(if: $id) { id } } } } }
                           query ById($id: ID = "00000000-0000-4000-8000-000000000000") { page: bookings(first: 200) { edges { node { id } } } booking(id: $id) { id } }`;
    t.sql.reset();
    const byId = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: { ...bearer(payer.token), accept: 'application/graphql-response+json' },
      payload: { query: twoOperations, operationName: 'ById', variables: { id: null } },
    });
    expect(t.sql.statements).toEqual([]);
    expect(byId.statusCode).toBe(400);
    expect(byId.json().errors).toEqual([
      { message: '$id must not be null: it is given where ID! is required', extensions: { code: 'validation', errors: { $id: 'must not be null: it is given where ID! is required' } } },
    ]);
    const withAgentNull = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: { ...bearer(payer.token), accept: 'application/graphql-response+json' },
      payload: { query: twoOperations, operationName: 'WithAgent', variables: { id: null } },
    });
    expect(withAgentNull.json().errors[0].message).toBe('$id must not be null: it is given where Boolean! is required');
  });

  it('keeps the whole estimate when an answer’s data is null: the root fields beside the failing one ran', async () => {
    const payer = await createAgent(t, agent, 'nulled');
    for (let i = 0; i < 2; i++) await createBooking(t, payer, hourSlot('2034-01-14T08:00:00Z', i * 2).startsAt, hourSlot('2034-01-14T08:00:00Z', i * 2).endsAt);
    // `booking` is non-null: an unknown id nulls the whole answer, while the page beside it has run.
    const query = '{ page: bookings(first: 50) { edges { node { id agent { id } } } } missing: booking(id: "00000000-0000-4000-8000-000000000000") { id } }';
    const answer = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(payer.token), payload: { query } });
    expect(answer.json().data).toBeNull();
    const estimated = 1 + 50 * 3 + 1;
    expect(answer.json().extensions.cost).toMatchObject({ estimated, actual: estimated, budget: { remaining: BUDGET - estimated } });
  });

  it('refuses an operation over what is left before any SQL runs: rate_limited, 429, its cost and when to retry', async () => {
    const spender = await createAgent(t, agent, 'spender');
    // Warm the caller's credential (a lookup is SQL too), and spend a little.
    const spent = (await post(t, PAGE, bearer(spender.token))).json().extensions.cost.budget.remaining as number;
    t.sql.reset();
    const refused = await post(t, SLOTS, bearer(spender.token));
    expect(t.sql.statements).toEqual([]);
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const cost = { estimated: SLOTS_ESTIMATE, actual: 0, budget: { limit: BUDGET, remaining: spent, resetSeconds: retryAfter, refillPerMinute: BUDGET } };
    expect(refused.json()).toEqual({
      errors: [{ message: expect.stringContaining('cost budget exceeded'), extensions: { code: 'rate_limited', cost, retryAfterSeconds: retryAfter } }],
      extensions: { cost },
    });
    // Refused means not charged: what was left still runs a smaller operation.
    const small = await post(t, '{ me { id } }', bearer(spender.token));
    expect(small.json().extensions.cost.budget.remaining).toBe(spent - 1);
  });

  it('keys anonymous callers by address (an IPv6 /64 shares one budget) and a forged token by its address too', async () => {
    const prices = '{ gpuPrices { slug } }';
    const spend = async (remoteAddress: string, headers: Record<string, string> = {}) =>
      (await post(t, prices, headers, remoteAddress)).json().extensions.cost.budget.remaining as number;
    const first = await spend('2001:db8:1:2::10');
    expect(await spend('2001:db8:1:2::99')).toBeLessThan(first);
    expect(await spend('2001:db8:1:3::10')).toBe(first);
    // An unknown token buys no budget of its own: it is its address's.
    const before = await spend('192.0.2.40');
    expect(await spend('192.0.2.40', bearer('agt_forged-token'))).toBeLessThan(before);
  });

  it('charges and reports over graphql-ws: a query answers with its cost, one over budget is refused, a subscription is charged once', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const client = createClient({ url: `ws://127.0.0.1:${address.port}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${agent.token}` }, retryAttempts: 0 });
    const run = (query: string) =>
      new Promise<unknown>((resolve) => {
        let answer: unknown;
        client.subscribe({ query }, { next: (value) => (answer = value), error: (error) => resolve({ error }), complete: () => resolve(answer) });
      });
    try {
      const page = (await run(PAGE)) as { data: unknown; extensions: { cost: { estimated: number; actual: number } } };
      expect(page.extensions.cost).toMatchObject({ estimated: PAGE_ESTIMATE, actual: 10 });
      const refused = (await run(SLOTS)) as { error: { extensions: { code: string; cost: { estimated: number } } }[] };
      expect(refused.error[0]!.extensions).toMatchObject({ code: 'rate_limited', cost: { estimated: SLOTS_ESTIMATE }, retryAfterSeconds: expect.any(Number) });
      // A null `if` is refused here too, before it runs.
      const nulled = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: 'query ($v: Boolean = true) { me { id @include(if: $v) } }', variables: { v: null } },
          { next: () => undefined, error: (error) => resolve(error), complete: () => resolve('completed') },
        );
      });
      expect(nulled).toEqual([expect.objectContaining({ message: expect.stringContaining('$v must not be null'), extensions: expect.objectContaining({ code: 'validation' }) })]);
      const live = client.iterate({ query: 'subscription { bookingEvents { cursor } }' });
      const slot = hourSlot('2034-01-20T08:00:00Z', 0);
      setTimeout(() => void createBooking(t, agent, slot.startsAt, slot.endsAt), 200);
      // Admitted (estimated 1); its events carry no cost of their own.
      expect((await live.next()).value).toEqual({ data: { bookingEvents: { cursor: expect.any(String) } } });
      await live.return?.();
    } finally {
      await client.dispose();
    }
  });

  it("admits a caller's operations in the process, without a statement each: points leave many operations to a statement, refunds with them", async () => {
    const regular = await createAgent(t, agent, 'regular');
    const metrics = async () => (await t.rest({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) })).body;
    const me = '{ me { id } }';
    // The first operation of a caller asks PostgreSQL for its window; the next ones are decided here.
    await post(t, me, bearer(regular.token));
    const before = await metrics();
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(t, me, bearer(regular.token))));
    const after = await metrics();
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(10).fill(200));
    const decided = (text: string, where: string) => counter(text, `gateway_graphql_cost_admissions_total{decided="${where}"}`);
    expect(decided(after, 'process') - decided(before, 'process')).toBe(10);
    expect(decided(after, 'database') - decided(before, 'database')).toBe(0);
    // Eleven operations of one point each, written together.
    await untilWritten(t, regular.token, 11);
    expect(counter(after, 'gateway_graphql_cost_statements_total') - counter(before, 'gateway_graphql_cost_statements_total')).toBeLessThan(10);
  });
});

/**
 * Two server processes (this test's app and a spawned `src/main.ts`) on one database: a caller spending
 * its budget through both is refused once it is spent, at most (P − 1) × S = S points past it
 * (docs/graphql.md, "Cost": each process may admit S points of a caller PostgreSQL has not seen).
 */
describe('GraphQL cost budget across two server processes', () => {
  const BUDGET = 1_000;
  const SHARE = Math.floor(BUDGET * LOCAL_SHARE_OF_BUDGET);
  let t: TestApp;
  let server: RunningServer;
  let base: string;
  let spender: AgentWithToken;

  beforeAll(async () => {
    t = await startTestApp({ env: { GRAPHQL_COST_PER_MIN: String(BUDGET) } });
    const port = await freePort();
    server = startServer({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: t.databaseUrl, PRICE_PROVIDERS: '', GRAPHQL_COST_PER_MIN: String(BUDGET) });
    base = `http://127.0.0.1:${port}`;
    spender = await bootstrapAgent(t, 'two-process spender');
    for (let i = 0; i < 6; i++) {
      const slot = hourSlot('2035-01-10T08:00:00Z', i * 2);
      await createBooking(t, spender, slot.startsAt, slot.endsAt);
    }
    await waitFor(server, 'gateway ready');
  }, 120_000);
  afterAll(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await server.exited;
    await t.close();
  });

  interface Answer {
    status: number;
    retryAfter: string | null;
    body: { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[]; extensions: { cost: { estimated: number; actual: number; budget: { remaining: number; resetSeconds: number } } } };
  }
  const inProcess = async (query: string): Promise<Answer> => {
    const response = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(spender.token), payload: { query } });
    return { status: response.statusCode, retryAfter: (response.headers['retry-after'] as string | undefined) ?? null, body: response.json() };
  };
  const spawned = async (query: string): Promise<Answer> => {
    const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(spender.token) }, body: JSON.stringify({ query }) });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Answer['body'] };
  };

  it('refuses a caller spending through both processes once its budget is spent, within (P − 1) × S past it, and loses no point', async () => {
    const answers: Answer[] = [];
    // Rounds of 32 operations at once, 16 through each process (more than S each), until a round is refused everywhere.
    for (let round = 0; round < 40; round++) {
      const batch = await Promise.all(Array.from({ length: 32 }, (_, i) => (i % 2 === 0 ? inProcess(SIX) : spawned(SIX))));
      answers.push(...batch);
      if (batch.every((answer) => answer.status === 429)) break;
    }
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(admitted.length + refused.length).toBe(answers.length);
    for (const answer of admitted) expect(answer.body.extensions.cost).toMatchObject({ estimated: SIX_COST, actual: SIX_COST });
    const spent = admitted.length * SIX_COST;
    // Never refused while more than one operation's estimate was left, never more than S past the budget.
    expect(spent).toBeGreaterThan(BUDGET - SIX_COST);
    expect(spent).toBeLessThanOrEqual(BUDGET + SHARE);
    expect(refused.length).toBeGreaterThan(0);
    // Each refusal as before: 429, Retry-After, rate_limited with the operation's cost and when to retry.
    for (const answer of refused) {
      const retryAfter = Number(answer.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const cost = { estimated: SIX_COST, actual: 0, budget: { limit: BUDGET, remaining: expect.any(Number), resetSeconds: retryAfter, refillPerMinute: BUDGET } };
      expect(answer.body).toEqual({
        errors: [{ message: expect.stringContaining('cost budget exceeded'), extensions: { code: 'rate_limited', cost, retryAfterSeconds: retryAfter } }],
        extensions: { cost },
      });
      expect(answer.body.extensions.cost.budget.remaining).toBeLessThan(SIX_COST);
    }
    // Every admitted point reaches PostgreSQL: both processes' parts, written by their reconciliations.
    await untilWritten(t, spender.token, spent);
  });
});

describe('GRAPHQL_COST_PER_MIN=0', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { GRAPHQL_COST_PER_MIN: '0' } });
  });
  afterAll(() => t.close());

  it('enforces nothing and still reports every cost, without a budget', async () => {
    const agent = await bootstrapAgent(t, 'unmetered');
    for (let i = 0; i < 3; i++) {
      const response = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query: SLOTS } });
      expect(response.json()).toEqual({ data: { bookedSlots: [] }, extensions: { cost: { estimated: SLOTS_ESTIMATE, actual: 0 } } });
    }
  });
});
