import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AddressInfo } from 'node:net';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { CreateAgentDocument, CreateProposalDocument } from '../../generated/graphql.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

// Issue 24 item 8: one agent created 300 child agents in 2.6 s (each with its own BOOKING_CAP) and
// 400 pending proposals to one target. Each bound is configured small here, hit once just inside and
// once just outside, and raced by 50 requests at once: exactly the bound wins.

const RACERS = 50;

/** A second process on the same database: every bound is shared through PostgreSQL. */
const startSecondProcess = (first: TestApp, env: Record<string, string>) => startTestApp({ jobs: false, databaseUrl: first.databaseUrl, env });
const stopSecondProcess = async (second: TestApp) => {
  await second.app.close();
  await second.orm.close(true);
};

const postAgent = (t: TestApp, parent: AgentWithToken, name: string) =>
  t.rest({ method: 'POST', url: '/api/agents', headers: bearer(parent.token), payload: { name } });

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

const childrenOf = async (t: TestApp, parentId: string) => (await t.query<{ n: number }>('select count(*)::int as n from agents where parent_id = $1', [parentId]))[0]!.n;

/** Members counted by the family row, and agents actually in the family: the same number, or something was half-written. */
const family = async (t: TestApp, rootId: string) =>
  (
    await t.query<{ members: number; agents: number }>(
      'select (select members from agent_families where root_id = $1) as members, (select count(*)::int from agents where root_id = $1) as agents',
      [rootId],
    )
  )[0]!;

describe('child agents one agent may create per minute (AGENT_CREATE_PER_MIN)', () => {
  const PER_MINUTE = 7;
  const env = { AGENT_CREATE_PER_MIN: String(PER_MINUTE) };
  let a: TestApp;
  let b: TestApp;
  let root: AgentWithToken;

  beforeAll(async () => {
    a = await startTestApp({ jobs: false, env });
    b = await startSecondProcess(a, env);
    root = await bootstrapAgent(a);
  });
  afterAll(async () => {
    await stopSecondProcess(b);
    await a.close();
  });

  it('creates the 7th in a minute and answers the 8th 429 rate_limited with Retry-After, over REST and GraphQL, in either process', async () => {
    const parent = await createAgent(a, root);
    const created = [];
    for (let n = 0; n < PER_MINUTE - 1; n++) created.push((await postAgent(n % 2 ? a : b, parent, `child-${n}`)).statusCode);
    expect(created).toEqual(Array(PER_MINUTE - 1).fill(201));
    const seventh = await b.gql(CreateAgentDocument, { input: { name: 'seventh' } }, bearer(parent.token));
    expect(seventh.errors).toBeUndefined();

    const eighth = await postAgent(a, parent, 'eighth');
    expect(eighth.statusCode).toBe(429);
    expect(eighth.json()).toEqual({ error: 'rate_limited', message: expect.stringMatching(/^rate limit exceeded: 7 child agents per 60 s; retry in \d+ s$/) });
    expect(Number(eighth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(eighth.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect({ limit: eighth.headers['ratelimit-limit'], remaining: eighth.headers['ratelimit-remaining'] }).toEqual({ limit: '7', remaining: '0' });

    const viaGraphql = await b.gql(CreateAgentDocument, { input: { name: 'ninth' } }, bearer(parent.token));
    expect(viaGraphql.data).toBeNull();
    expect(viaGraphql.errors?.map((error) => error.extensions)).toEqual([{ code: 'rate_limited', retryAfterSeconds: expect.any(Number) }]);
    expect(await childrenOf(a, parent.id)).toBe(PER_MINUTE);

    // The budget is the parent's: its first child has a whole minute of its own.
    const child = await b.query<{ id: string }>('select id from agents where parent_id = $1 limit 1', [parent.id]);
    expect(child).toHaveLength(1);
  });

  it(`lets exactly ${PER_MINUTE} of ${RACERS} racing creations from one parent through, across two processes; the rest are 429`, async () => {
    const parent = await createAgent(b, root);
    const answers = await Promise.all(Array.from({ length: RACERS }, (_, n) => postAgent(n % 2 ? a : b, parent, `racer-${n}`)));
    expect(tally(answers.map((answer) => answer.statusCode))).toEqual({ 201: PER_MINUTE, 429: RACERS - PER_MINUTE });
    for (const refused of answers.filter((answer) => answer.statusCode === 429)) {
      expect(refused.json().error).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(await childrenOf(a, parent.id)).toBe(PER_MINUTE);
  });
});

describe('agents in one family (AGENT_FAMILY_MAX)', () => {
  const FAMILY_MAX = 20;
  const env = { AGENT_FAMILY_MAX: String(FAMILY_MAX) };

  it('creates the 20th agent of a family and answers the 21st 409 limit_exceeded, over REST and GraphQL, writing nothing', async () => {
    const t = await startTestApp({ jobs: false, env });
    try {
      const root = await bootstrapAgent(t);
      // The family is the root and all its descendants, however deep.
      let parent = root;
      for (let n = 1; n < FAMILY_MAX - 1; n++) parent = n % 3 === 0 ? await createAgent(t, parent) : (await createAgent(t, root), parent);
      expect(await family(t, root.id)).toEqual({ members: FAMILY_MAX - 1, agents: FAMILY_MAX - 1 });

      const last = await postAgent(t, parent, 'the twentieth');
      expect(last.statusCode).toBe(201);
      const over = await postAgent(t, root, 'one too many');
      expect(over.statusCode).toBe(409);
      expect(over.json()).toEqual({ error: 'limit_exceeded', message: 'an agent family (the root agent and all its descendants) holds at most 20 agents' });
      const overViaGraphql = await t.gql(CreateAgentDocument, { input: { name: 'one too many' } }, bearer(last.json().public_token));
      expect(overViaGraphql.errors?.map((error) => error.extensions?.code)).toEqual(['limit_exceeded']);
      expect(await family(t, root.id)).toEqual({ members: FAMILY_MAX, agents: FAMILY_MAX });
      expect(await t.query('select name from agents where name = $1', ['one too many'])).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it(`lets exactly ${FAMILY_MAX - 1} of ${RACERS} racing creations into a family of one, across two processes; the rest are 409 limit_exceeded`, async () => {
    const a = await startTestApp({ jobs: false, env });
    const b = await startSecondProcess(a, env);
    try {
      const root = await bootstrapAgent(a);
      const answers = await Promise.all(Array.from({ length: RACERS }, (_, n) => postAgent(n % 2 ? a : b, root, `racer-${n}`)));
      expect(tally(answers.map((answer) => answer.statusCode))).toEqual({ 201: FAMILY_MAX - 1, 409: RACERS - FAMILY_MAX + 1 });
      expect(new Set(answers.filter((answer) => answer.statusCode === 409).map((answer) => answer.json().error))).toEqual(new Set(['limit_exceeded']));
      expect(await family(a, root.id)).toEqual({ members: FAMILY_MAX, agents: FAMILY_MAX });
    } finally {
      await stopSecondProcess(b);
      await a.close();
    }
  });

  it('holds a writer that sets no limit (psql, a seeding script) to the contract default of 10,000, and fills every root itself', async () => {
    const t = await startTestApp({ jobs: false, env });
    try {
      const root = await bootstrapAgent(t);
      const insertChildren = (count: number) =>
        t.query(
          `insert into agents (id, name, metadata, config, token_hash, parent_id, root_id, created_at)
           select gen_random_uuid(), 'bulk-' || i, '{}', '{}', encode(sha256(gen_random_uuid()::text::bytea), 'hex'), $1, gen_random_uuid(), now()
             from generate_series(1, $2::int) as i`,
          [root.id, count],
        );
      // A root_id sent by the writer is overwritten with the parent's family.
      await insertChildren(10_000 - 1);
      expect(await family(t, root.id)).toEqual({ members: 10_000, agents: 10_000 });
      const over = await insertChildren(1).then(
        () => undefined,
        (error: { code?: string; constraint?: string }) => ({ code: error.code, constraint: error.constraint }),
      );
      expect(over).toEqual({ code: '23514', constraint: 'agents_family_limit' });
      expect(await family(t, root.id)).toEqual({ members: 10_000, agents: 10_000 });
    } finally {
      await t.close();
    }
  });
});

describe('pending proposals from one agent to one target (PENDING_PROPOSALS_MAX)', () => {
  const PENDING_MAX = 5;
  const env = { PENDING_PROPOSALS_MAX: String(PENDING_MAX) };
  let a: TestApp;
  let b: TestApp;
  let root: AgentWithToken;
  let hour = 0;
  const mcpClients: Client[] = [];

  beforeAll(async () => {
    a = await startTestApp({ jobs: false, env });
    b = await startSecondProcess(a, env);
    root = await bootstrapAgent(a);
    await a.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(mcpClients.map((client) => client.close()));
    await stopSecondProcess(b);
    await a.close();
  });

  const nextSlot = () => {
    const start = new Date(Date.UTC(2034, 0, 1, 9) + hour++ * 3_600_000);
    return { startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 1_800_000).toISOString() };
  };
  const propose = (t: TestApp, from: AgentWithToken, to: AgentWithToken) =>
    t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(from.token), payload: { targetAgentId: to.id, ...nextSlot() } });
  const pending = async (from: AgentWithToken, to: AgentWithToken) =>
    (
      await a.query<{ n: number }>("select count(*)::int as n from proposals where proposer_agent_id = $1 and target_agent_id = $2 and status = 'pending'", [
        from.id,
        to.id,
      ])
    )[0]!.n;
  const mcpCall = async (agent: AgentWithToken, name: string, args: Record<string, unknown>) => {
    const client = new Client({ name: 'fan-out-limits-test', version: '1.0.0' });
    const { port } = a.app.server.address() as AddressInfo;
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: bearer(agent.token) } }));
    mcpClients.push(client);
    const result = await client.callTool({ name, arguments: args });
    return { isError: result.isError === true, body: JSON.parse((result.content as { text: string }[])[0]!.text) };
  };

  it('opens the 5th pending proposal to one target and answers the 6th 409 limit_exceeded on REST, GraphQL and MCP; another target, the other direction and a decided proposal do not count', async () => {
    const proposer = await createAgent(a, root);
    // The target is the proposer's child: free/busy is shared in the family by default (first-available below).
    const [target, other] = [await createAgent(a, proposer), await createAgent(a, root)];
    const opened = [];
    for (let n = 0; n < PENDING_MAX; n++) opened.push(await propose(n % 2 ? a : b, proposer, target));
    expect(opened.map((answer) => answer.statusCode)).toEqual(Array(PENDING_MAX).fill(201));

    const sixth = await propose(a, proposer, target);
    expect(sixth.statusCode).toBe(409);
    expect(sixth.json()).toEqual({
      error: 'limit_exceeded',
      message: 'at most 5 proposals from one agent to one target may be pending: withdraw one or wait for the target to decide',
    });
    const viaGraphql = await b.gql(CreateProposalDocument, { input: { targetAgentId: target.id, ...nextSlot() } }, bearer(proposer.token));
    expect(viaGraphql.errors?.map((error) => error.extensions?.code)).toEqual(['limit_exceeded']);
    const viaMcp = await mcpCall(proposer, 'propose_slot', { targetAgentId: target.id, ...nextSlot() });
    expect({ isError: viaMcp.isError, error: viaMcp.body.error }).toEqual({ isError: true, error: 'limit_exceeded' });
    const firstAvailable = await a.rest({
      method: 'POST',
      url: '/api/proposals/first-available',
      headers: bearer(proposer.token),
      payload: { targetAgentId: target.id, duration: 30, from: '2035-01-01T00:00:00Z', to: '2035-01-02T00:00:00Z' },
    });
    expect({ status: firstAvailable.statusCode, error: firstAvailable.json().error }).toEqual({ status: 409, error: 'limit_exceeded' });
    expect(await pending(proposer, target)).toBe(PENDING_MAX);

    // Per target and per direction.
    expect((await propose(a, proposer, other)).statusCode).toBe(201);
    expect((await propose(a, target, proposer)).statusCode).toBe(201);
    // A proposal that leaves pending (withdrawn, declined, accepted) makes room for one more.
    const [first, second, third] = opened.map((answer) => answer.json().id as string);
    const decide = (agent: AgentWithToken, id: string, decision: string) => a.rest({ method: 'PATCH', url: `/api/proposals/${id}/${decision}`, headers: bearer(agent.token) });
    expect((await decide(proposer, first!, 'withdraw')).statusCode).toBe(200);
    expect((await propose(b, proposer, target)).statusCode).toBe(201);
    expect((await propose(b, proposer, target)).statusCode).toBe(409);
    expect((await decide(target, second!, 'decline')).statusCode).toBe(200);
    expect((await decide(target, third!, 'accept')).statusCode).toBe(200);
    expect((await propose(a, proposer, target)).statusCode).toBe(201);
    expect((await propose(a, proposer, target)).statusCode).toBe(201);
    expect((await propose(a, proposer, target)).statusCode).toBe(409);
    expect(await pending(proposer, target)).toBe(PENDING_MAX);
  });

  it(`lets exactly ${PENDING_MAX} of ${RACERS} racing proposals to one target open, across two processes; the rest are 409 limit_exceeded`, async () => {
    const [proposer, target] = [await createAgent(a, root), await createAgent(a, root)];
    const answers = await Promise.all(Array.from({ length: RACERS }, (_, n) => propose(n % 2 ? a : b, proposer, target)));
    expect(tally(answers.map((answer) => answer.statusCode))).toEqual({ 201: PENDING_MAX, 409: RACERS - PENDING_MAX });
    expect(new Set(answers.filter((answer) => answer.statusCode === 409).map((answer) => answer.json().error))).toEqual(new Set(['limit_exceeded']));
    // Nothing half-written: the refused proposals left no row.
    expect(await a.query('select status from proposals where proposer_agent_id = $1', [proposer.id])).toEqual(Array(PENDING_MAX).fill({ status: 'pending' }));
  });
});
