import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/** A page of up to 50 bookings with their agent: estimated 1 + 50 × (edge + node + agent) = 151. */
const PAGE = '{ bookings(from: "2034-01-01T00:00:00Z", to: "2034-02-01T00:00:00Z", first: 50) { edges { node { id startsAt agent { id name } } } } }';
const PAGE_ESTIMATE = 151;
/** Estimated at bookedSlots' assumed size, 2,000 slots (a day holds none here): more than the whole budget below. */
const SLOTS = '{ bookedSlots(from: "2034-03-01T00:00:00Z", to: "2034-03-02T00:00:00Z") { startsAt } }';
const SLOTS_ESTIMATE = 2_000;

describe('GraphQL cost: extensions.cost on every answer, a per-caller budget shared by processes', () => {
  let t: TestApp;
  let other: TestApp;
  let agent: AgentWithToken;
  const BUDGET = 1_000;

  beforeAll(async () => {
    t = await startTestApp({ env: { GRAPHQL_COST_PER_MIN: String(BUDGET) } });
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
    // The refund is written after the answer: the other process sees it once it landed.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await post(other, PAGE);
    expect(second.json().extensions.cost.budget.remaining).toBe(BUDGET - 20);
    // Errors and refusals before execution carry a cost too (nothing charged, so no budget).
    const invalid = await post(t, '{ bookings { nope } }');
    expect(invalid.json().extensions).toEqual({ cost: { estimated: 0, actual: 0 } });
  });

  it('refuses an operation over what is left before any SQL runs: rate_limited, 429, its cost and when to retry', async () => {
    const spender = await createAgent(t, agent, 'spender');
    // Warm the caller's credential (a lookup is SQL too), and spend a little.
    const spent = (await post(t, PAGE, bearer(spender.token))).json().extensions.cost.budget.remaining as number;
    await new Promise((resolve) => setTimeout(resolve, 100));
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
