import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { callTool, connectMcp, type ToolAnswer } from '../../factories/mcp.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

type Schema = { type?: string; format?: string; minLength?: number; minimum?: number; minItems?: number; items?: Schema; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[] };

/** The smallest value a published schema accepts: a well-formed call, whatever the tool. */
function validValue(schema: Schema): unknown {
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return '2031-01-06T09:00:00Z';
      return schema.format === 'uuid' ? '00000000-0000-4000-8000-000000000000' : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'array':
      // As few items as the schema takes, each a value of the items' schema.
      return Array.from({ length: schema.minItems ?? 0 }, () => validValue(schema.items!));
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name) => [name, validValue(schema.properties![name]!)]));
    default:
      throw new Error(`no value for ${JSON.stringify(schema)}`);
  }
}

/** The one shape of every tool error: `isError`, and `{error, message[, errors]}` as structured content and as text. */
function expectToolError(answer: ToolAnswer, expected: { error: string; errors?: Record<string, string> }) {
  expect(answer.isError).toBe(true);
  expect(answer.structured).toEqual(answer.body);
  expect(answer.body).toEqual({ error: expected.error, message: expect.any(String), ...(expected.errors ? { errors: expected.errors } : {}) });
}

const TABLES = ['agents', 'bookings', 'booking_slots', 'proposals', 'booking_events', 'idempotency_keys'];
const COUNT_ALL = `select ${TABLES.map((table) => `(select count(*) from ${table})`).join(` || ',' || `)} as counts`;

describe('MCP tool arguments: closed schemas, checked as REST checks bodies, one error shape', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let agent: AgentWithToken;
  let asAgent: Client;
  let tools: Tool[];
  const counts = async () => (await t.query<{ counts: string }>(COUNT_ALL))[0]!.counts;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
    agent = await createAgent(t, root);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    asAgent = await connectMcp(t, bearer(agent.token));
    ({ tools } = await asAgent.listTools());
  });
  afterAll(async () => {
    await asAgent.close();
    await t.close();
  });

  it('publishes every input schema closed (additionalProperties: false)', () => {
    expect(tools.length).toBeGreaterThanOrEqual(9);
    expect(tools.filter((tool) => tool.inputSchema.type !== 'object' || tool.inputSchema.additionalProperties !== false).map((tool) => tool.name)).toEqual([]);
  });

  // Names Object.prototype also has: a field map filled with `??=` found those and named nothing.
  const UNKNOWN_NAMES = ['unknownArgument', 'toString', 'constructor', 'hasOwnProperty'];

  it('refuses an unknown argument on every tool tools/list names, as a validation error naming it, writing nothing', async () => {
    const before = await counts();
    const answers: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const tool of tools) {
      for (const name of UNKNOWN_NAMES) {
        const answer = await callTool(asAgent, tool.name, { ...(validValue(tool.inputSchema as Schema) as object), [name]: true });
        answers[`${tool.name} ${name}`] = answer.isError && answer.structured;
        expected[`${tool.name} ${name}`] = { error: 'validation', message: `${name} is not allowed`, errors: { [name]: 'is not allowed' } };
      }
    }
    expect(answers).toEqual(expected);
    expect(await counts()).toBe(before);
  });

  it.each(UNKNOWN_NAMES)('names the unknown property %s in a REST body too', async (name) => {
    const rest = await t.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, startsAt: '2031-01-06T09:00:00Z', endsAt: '2031-01-06T10:00:00Z', [name]: 1 } });
    expect({ status: rest.statusCode, body: rest.json() }).toEqual({ status: 400, body: { errors: { [name]: 'is not allowed' } } });
  });

  it('create_booking with an rrule books nothing and names rrule (REST takes none either)', async () => {
    const before = await counts();
    const args = { startsAt: '2031-01-06T09:00:00Z', endsAt: '2031-01-06T10:00:00Z', rrule: 'FREQ=DAILY;COUNT=3' };
    expectToolError(await callTool(asAgent, 'create_booking', args), { error: 'validation', errors: { rrule: 'is not allowed' } });
    const rest = await t.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, ...args } });
    expect(rest.json()).toEqual({ errors: { rrule: 'is not allowed' } });
    expect(await counts()).toBe(before);
  });

  describe('the same mistake, the same fields and words as REST', () => {
    const slot = { startsAt: '2031-02-03T09:00:00Z', endsAt: '2031-02-03T10:00:00Z' };
    const window = { from: '2031-02-03T00:00:00Z', to: '2031-02-04T00:00:00Z' };
    const cases: [mistake: string, tool: string, args: () => Record<string, unknown>, rest: () => { method: 'GET' | 'POST'; url: string; payload?: object }][] = [
      ['a date-time that is not one', 'create_booking', () => ({ ...slot, startsAt: '2031-02-03T09:00' }), () => ({ method: 'POST', url: '/api/bookings', payload: { agentId: agent.id, ...slot, startsAt: '2031-02-03T09:00' } })],
      ['a missing argument', 'create_booking', () => ({ startsAt: slot.startsAt }), () => ({ method: 'POST', url: '/api/bookings', payload: { agentId: agent.id, startsAt: slot.startsAt } })],
      ['a number for a date-time', 'create_booking', () => ({ ...slot, endsAt: 1_000 }), () => ({ method: 'POST', url: '/api/bookings', payload: { agentId: agent.id, ...slot, endsAt: 1_000 } })],
      ['an empty range (the service rule)', 'create_booking', () => ({ ...slot, endsAt: slot.startsAt }), () => ({ method: 'POST', url: '/api/bookings', payload: { agentId: agent.id, ...slot, endsAt: slot.startsAt } })],
      ['an empty agent id', 'propose_slot', () => ({ targetAgentId: '', ...slot }), () => ({ method: 'POST', url: '/api/proposals', payload: { targetAgentId: '', ...slot } })],
      ['a duration of 1e308', 'propose_first_available', () => ({ targetAgentId: root.id, duration: 1e308, ...window }), () => ({ method: 'POST', url: '/api/proposals/first-available', payload: { targetAgentId: root.id, duration: 1e308, ...window } })],
      ['a duration that is not whole', 'availability', () => ({ agentIds: [], duration: 2.5, ...window }), () => ({ method: 'GET', url: `/api/availability?${new URLSearchParams({ duration: '2.5', ...window })}` })],
      ['a limit of 0', 'list_bookings', () => ({ limit: 0 }), () => ({ method: 'GET', url: '/api/bookings?limit=0' })],
      ['a lower-case window past the bound', 'availability', () => ({ agentIds: [], duration: 30, from: '2031-02-03t00:00:00z', to: '2031-04-03t00:00:00z' }), () => ({ method: 'GET', url: `/api/availability?${new URLSearchParams({ duration: '30', from: '2031-02-03t00:00:00z', to: '2031-04-03t00:00:00z' })}` })],
    ];

    it.each(cases)('%s (%s)', async (_, name, args, request) => {
      const before = await counts();
      const rest = await t.rest({ ...request(), headers: bearer(agent.token) });
      expect(rest.statusCode).toBe(400);
      const answer = await callTool(asAgent, name, args());
      expectToolError(answer, { error: 'validation', errors: rest.json<{ errors: Record<string, string> }>().errors });
      expect(await counts()).toBe(before);
    });
  });

  it('refuses U+0000 in an argument as a validation error naming it (PostgreSQL stores none), writing nothing', async () => {
    const before = await counts();
    const nul = 'key\u0000with a NUL';
    expectToolError(await callTool(asAgent, 'create_booking', { startsAt: '2031-03-01T09:00:00Z', endsAt: '2031-03-01T10:00:00Z', idempotencyKey: nul }), {
      error: 'validation',
      errors: { idempotencyKey: 'must not contain the character U+0000' },
    });
    expectToolError(await callTool(asAgent, 'availability', { agentIds: [root.id, nul], duration: 30, from: '2031-03-01T00:00:00Z', to: '2031-03-02T00:00:00Z' }), {
      error: 'validation',
      errors: { 'agentIds.1': 'must not contain the character U+0000' },
    });
    expect(await counts()).toBe(before);
  });

  it('answers an unknown tool with a protocol error (the specification keeps that one a protocol error)', async () => {
    await expect(asAgent.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: no_such_tool/);
  });
});
