import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { bearer, startTestApp, type TestApp, withoutCost } from '../../harness.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

/**
 * Queries and mutations the server has seen before run compiled by graphql-jit (GRAPHQL_JIT); these
 * tests hold that a compiled operation answers exactly as graphql-js does, through the real server.
 */
describe('compiled execution (graphql-jit) through /graphql', () => {
  let compiled: TestApp;
  let interpreted: TestApp;
  let owner: AgentWithToken;
  let stranger: AgentWithToken;
  let bookingId: string;

  beforeAll(async () => {
    compiled = await startTestApp({ env: { GRAPHQL_JIT: '1', METRICS_TOKEN } });
    owner = await bootstrapAgent(compiled, 'owner');
    stranger = await createAgent(compiled, owner, 'stranger');
    for (let i = 0; i < 12; i++) {
      const slot = hourSlot('2031-03-03T08:00:00Z', i * 2);
      const created = await createBooking(compiled, owner, slot.startsAt, slot.endsAt);
      bookingId ??= created.id;
    }
    await createAgent(compiled, owner, 'child');
    // The same database, every operation run by graphql-js.
    interpreted = await startTestApp({ databaseUrl: compiled.databaseUrl, jobs: false, env: { GRAPHQL_JIT: 'off', METRICS_TOKEN } });
  }, 60_000);
  afterAll(async () => {
    await interpreted.close();
    await compiled.close();
  });

  const post = (t: TestApp, body: Record<string, unknown>, headers: Record<string, string>) =>
    t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: body });
  const executions = async (t: TestApp) => {
    const text = (await t.rest({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) })).body;
    const count = (engine: string) => Number(new RegExp(`gateway_graphql_executions_total\\{engine="${engine}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    return { compiled: count('compiled'), interpreted: count('interpreted') };
  };

  const cases: { name: string; body: () => Record<string, unknown>; caller: () => AgentWithToken }[] = [
    {
      name: 'a page of bookings with their agent (the bench S3 document)',
      body: () => ({ query: '{ bookings(from: "2031-03-01T00:00:00Z", to: "2031-04-01T00:00:00Z", first: 10) { edges { cursor node { id startsAt endsAt status rrule agent { id name } } } pageInfo { hasNextPage endCursor } } }' }),
      caller: () => owner,
    },
    {
      name: 'the caller with children, through fragments and variables',
      body: () => ({
        query: 'query Me($first: Int) { me { ...A children(first: $first) { ...A parent { id } } } } fragment A on Agent { id name createdAt metadata }',
        variables: { first: 5 },
        operationName: 'Me',
      }),
      caller: () => owner,
    },
    {
      name: "another agent's booking: forbidden, with its path",
      body: () => ({ query: `{ booking(id: "${bookingId}") { id } me { id } }` }),
      caller: () => stranger,
    },
    {
      name: 'a validation error from a service, with its field map',
      body: () => ({ query: '{ bookings(first: 0) { edges { node { id } } } }' }),
      caller: () => owner,
    },
    {
      name: 'a variable that does not coerce (graphql-js words it and Apollo codes it BAD_USER_INPUT)',
      body: () => ({ query: 'query ($from: DateTimeISO!) { freeBusy(from: $from, to: $from) { busy { startsAt } } }', variables: { from: '2031-03-03 08:00' } }),
      caller: () => owner,
    },
    {
      name: 'a required variable left out',
      body: () => ({ query: 'query ($id: ID!) { booking(id: $id) { id } }', variables: {} }),
      caller: () => owner,
    },
    {
      name: 'no credential: unauthorized',
      body: () => ({ query: '{ me { id } }' }),
      caller: () => ({ id: '', token: 'agt_not-a-token' }),
    },
  ];

  for (const { name, body, caller } of cases) {
    it(`answers ${name} as graphql-js does, status and body`, async () => {
      const headers = bearer(caller().token);
      // Twice each: the second answer of the compiled server is certainly compiled.
      const answers = [];
      for (const t of [compiled, interpreted, compiled]) {
        const response = await post(t, body(), headers);
        answers.push({ status: response.statusCode, body: withoutCost(response.json()) });
      }
      expect(answers[2]).toEqual(answers[1]);
      expect(answers[0]).toEqual(answers[1]);
    });
  }

  // graphql-jit writes @skip/@include conditions onto the cached document's nodes (and adds to them on
  // each compilation): documents that use them run in graphql-js, whatever GRAPHQL_JIT says.
  it.each([
    [
      'two operations of one document sharing a fragment, one of them including it by a variable',
      'query A($x: Boolean!) { ...F @include(if: $x) } query B { ...F } fragment F on Query { me { id } }',
      [
        { operationName: 'A', variables: { x: false } },
        { operationName: 'A', variables: { x: true } },
        { operationName: 'B' },
        { operationName: 'B' },
      ],
    ],
    ['a fragment spread skipped, then spread again', '{ ...F @skip(if: true) ...F } fragment F on Query { me { id } }', [{}, {}]],
    [
      'one fragment under two aliases, included in one by a variable',
      'query ($x: Boolean!) { a: me { ...F @include(if: $x) } b: me { ...F } } fragment F on Agent { id }',
      [{ variables: { x: false } }, { variables: { x: false } }, { variables: { x: true } }],
    ],
  ])('answers %s as graphql-js does, run by graphql-js', async (_case, query, requests) => {
    const before = await executions(compiled);
    for (const request of requests) {
      const answers = [];
      for (const t of [compiled, interpreted]) answers.push(withoutCost((await post(t, { query, ...request }, bearer(owner.token))).json()));
      expect(answers[0]).toEqual(answers[1]);
      expect(answers[0].errors).toBeUndefined();
    }
    expect(await executions(compiled)).toEqual({ compiled: before.compiled, interpreted: before.interpreted + requests.length });
  });

  // GraphiQL sends the operation name it last saw, a moment behind its editor.
  it('answers an operation name the document does not hold with graphql-js\'s error, not a 500', async () => {
    for (const t of [compiled, compiled, interpreted]) {
      const response = await post(t, { query: '{ me { id } }', operationName: 'GpuPrices' }, bearer(owner.token));
      expect({ status: response.statusCode, errors: response.json().errors.map((error: { message: string }) => error.message) }).toEqual({
        status: 400,
        errors: ['Unknown operation named "GpuPrices".'],
      });
    }
  });

  it('runs a mutation compiled, with the same answer shape and rows as graphql-js', async () => {
    const create = (t: TestApp, hour: number) =>
      post(
        t,
        {
          query: 'mutation Create($input: CreateBookingInput!) { createBooking(input: $input) { agentId startsAt endsAt status rrule agent { id name } } }',
          variables: { input: { agentId: owner.id, ...hourSlot('2032-01-05T00:00:00Z', hour), rrule: 'FREQ=DAILY;COUNT=2' } },
        },
        bearer(owner.token),
      );
    const before = await executions(compiled);
    const fromCompiled = await create(compiled, 1);
    const fromInterpreted = await create(interpreted, 5);
    expect(await executions(compiled)).toEqual({ compiled: before.compiled + 1, interpreted: before.interpreted });
    const shape = (body: { data: { createBooking: Record<string, unknown> } }) => ({ ...body.data.createBooking, startsAt: 'T', endsAt: 'T' });
    expect(fromCompiled.statusCode).toBe(200);
    expect(shape(fromCompiled.json())).toEqual(shape(fromInterpreted.json()));
    // Overlapping its own first occurrence: slot_taken, from the database constraint, in both.
    const clash = await create(compiled, 1);
    expect(clash.json()).toMatchObject({ data: null, errors: [{ path: ['createBooking'], extensions: { code: 'slot_taken' } }] });
    const rows = await compiled.query<{ n: string }>('select count(*) as n from bookings where agent_id = $1 and starts_at >= $2', [owner.id, '2032-01-01T00:00:00Z']);
    expect(rows[0]!.n).toBe('2');
  });

  it('compiles an operation on its second request with the default GRAPHQL_JIT', async () => {
    const t = await startTestApp({ databaseUrl: compiled.databaseUrl, jobs: false, env: { GRAPHQL_JIT: '2', METRICS_TOKEN } });
    try {
      const query = { query: '{ me { id name } }' };
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(withoutCost((await post(t, query, bearer(owner.token))).json()));
      expect(answers).toEqual([0, 1, 2].map(() => ({ data: { me: { id: owner.id, name: 'owner' } } })));
      expect(await executions(t)).toEqual({ compiled: 2, interpreted: 1 });
    } finally {
      await t.close();
    }
  });

  it('loads every booking agent of a compiled page in one statement (dataloader batching holds)', async () => {
    // Twelve rows ask for their agent's children: one batched load, not twelve.
    const query = { query: 'query Page { bookings(first: 12) { edges { node { id agent { id name children { id } } } } } }' };
    await post(compiled, query, bearer(owner.token));
    compiled.sql.reset();
    const response = await post(compiled, query, bearer(owner.token));
    expect(response.json().data.bookings.edges).toHaveLength(12);
    // The page itself, then one statement for the children of the (one) agent, not one per row.
    const childLoads = compiled.sql.statements.filter((sql) => /\bfrom agents\b/.test(sql) && /parent/.test(sql));
    expect(childLoads).toHaveLength(1);
  });
});
