import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import * as fc from 'fast-check';
import pg from 'pg';
import { ERROR_STATUS } from '../../../src/platform/errors.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { MINT, pair, startFakeScreener } from '../../factories/fake-screener.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Hostile arguments generated from each tool's own input schema in tools/list, sent through the
 * official SDK client: well-formed arguments, then one mutation (an argument of the wrong type, huge,
 * with control characters or lone surrogates, a number outside every integer range, missing, or one
 * the tool does not take). Never a protocol error, never an internal error, every error in the one
 * shape `{error, message[, errors]}` (structured and as text), a `validation` error naming the argument
 * whenever the published schema refuses the arguments, and nothing written by an error.
 * Seeded; FUZZ_RUNS (default 100 per tool) and FUZZ_SEED as in the REST and GraphQL ones.
 */
const RUNS_PER_TOOL = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);

type JsonSchema = {
  type?: string | string[];
  pattern?: string;
  enum?: unknown[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  maxItems?: number;
  minItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

interface Owned {
  root: AgentWithToken;
  bookingId: string;
  proposalId: string;
}

/** A value the schema accepts; ids are rows the caller may touch, so that calls reach the services. */
function validValue(schema: JsonSchema, name: string, owned: Owned): fc.Arbitrary<unknown> {
  if (name === 'bookingId') return fc.constant(owned.bookingId);
  if (name === 'proposalId') return fc.constant(owned.proposalId);
  if (name === 'targetAgentId' || name === 'agentIds.item' || name === 'agentId') return fc.constant(owned.root.id);
  // Event cursors: the start of the log, or one past anything handed out (a validation error).
  if (name === 'since') return fc.constantFrom('0', '1', '999999999999999999');
  if (name === 'mint') return fc.constant(MINT);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (Array.isArray(schema.type)) {
    // A nullable value (`["array", "null"]`): null or a value of the other type.
    return fc.oneof(...schema.type.map((type) => (type === 'null' ? fc.constant(null) : validValue({ ...schema, type }, name, owned))));
  }
  switch (schema.type) {
    case 'boolean':
      return fc.boolean();
    case 'string':
      if (schema.format === 'date-time') {
        const instant = fc.integer({ min: Date.UTC(2034, 0, 1), max: Date.UTC(2035, 0, 1) }).map((ms) => new Date(ms - (ms % 3_600_000)).toISOString());
        // RFC 3339 lets T and Z be lower case: well-formed either way.
        return fc.tuple(instant, fc.boolean()).map(([text, lower]) => (lower ? text.toLowerCase() : text));
      }
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
      return fc.string({ minLength: Math.max(1, schema.minLength ?? 1), maxLength: Math.min(schema.maxLength ?? 20, 20), unit: 'grapheme-ascii' });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? 1, max: Math.min(schema.maximum ?? 1_000, 1_000) });
    case 'array':
      return fc.array(validValue(schema.items ?? {}, `${name}.item`, owned), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const properties = schema.properties ?? {};
      return fc.record(Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, validValue(property, key, owned)])), {
        requiredKeys: schema.required ?? [],
      });
    }
    default:
      throw new Error(`no generator for ${JSON.stringify(schema)}`);
  }
}

/** What a careless or hostile client puts where an argument belongs. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    '',
    ' ',
    'x'.repeat(70_000),
    '\u0000',
    'a\u0000b',
    '\u0001\u001f\u007f\u0085\u2028',
    '\ud800',
    'a\udfffb',
    '\udc00\ud800',
    '🧨'.repeat(300),
    '2034-02-30T09:00:00Z',
    '2034-01-01 09:00:00Z',
    '2034-01-01T09:00:00+0100',
    '2034-12-31T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.001Z',
    '2034-01-01',
    'NaN',
    '1e308',
    "' or 1=1 --",
    -1,
    0,
    -0,
    0.5,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 32,
    2 ** 53 + 1,
    -(2 ** 53) - 1,
    2 ** 63,
    2 ** 64,
    1e308,
    -1e308,
    Number.MIN_VALUE,
    true,
    [],
    {},
    ['x'.repeat(70_000)],
  ),
  fc.integer().map((value) => value * 1_000_003),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 50, max: 400 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
);

/**
 * Names an argument may not have. `__proto__` is left out: a JSON body holding that key is refused
 * whole before JSON-RPC is read (secure-json-parse), the one argument problem that is not a tool result.
 */
const EXTRA_NAMES = ['extra', 'rrule', 'agentId', 'constructor', 'toString', 'hasOwnProperty', 'x'.repeat(300), ''];

type Mutation =
  | { kind: 'replace'; field: string; value: unknown }
  | { kind: 'drop'; field: string }
  | { kind: 'extra'; field: string; value: unknown }
  | { kind: 'replace item'; field: string; value: unknown };

function mutations(schema: JsonSchema): fc.Arbitrary<Mutation> {
  const fields = Object.keys(schema.properties ?? {});
  const arrays = fields.filter((field) => schema.properties![field]!.type === 'array');
  const options: fc.Arbitrary<Mutation>[] = [fc.record({ kind: fc.constant('extra' as const), field: fc.constantFrom(...EXTRA_NAMES), value: hostileValue })];
  if (fields.length) {
    options.push(
      fc.record({ kind: fc.constant('replace' as const), field: fc.constantFrom(...fields), value: hostileValue }),
      fc.record({ kind: fc.constant('drop' as const), field: fc.constantFrom(...fields) }),
    );
  }
  if (arrays.length) options.push(fc.record({ kind: fc.constant('replace item' as const), field: fc.constantFrom(...arrays), value: hostileValue }));
  return fc.oneof(...options);
}

function mutate(valid: Record<string, unknown>, mutation: Mutation): Record<string, unknown> {
  const args = { ...valid };
  switch (mutation.kind) {
    case 'replace':
    case 'extra':
      args[mutation.field] = mutation.value;
      break;
    case 'drop':
      delete args[mutation.field];
      break;
    case 'replace item':
      args[mutation.field] = [...((args[mutation.field] as unknown[] | undefined) ?? []), mutation.value];
      break;
  }
  return args;
}

const TABLES = ['agents', 'bookings', 'booking_slots', 'proposals', 'booking_events', 'webhooks', 'calendar_feeds'];
// A refusal under an Idempotency key is recorded so that a retry gets the same answer (REST does the same).
const COUNT_ALL = `select ${TABLES.map((table) => `(select count(*) from ${table})`).join(` || ',' || `)} as counts, (select count(*)::int from idempotency_keys) as keys`;
const CODES = new Set(Object.keys(ERROR_STATUS));

describe('generated hostile arguments on every MCP tool, through the SDK client', () => {
  let t: TestApp;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  let owned: Owned;
  let client: Client;
  let tools: Tool[];
  // The schema as published, checked by a validator of the test's own: a refusal there must be a validation error.
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
  const validators = new Map<string, ValidateFunction>();

  beforeAll(async () => {
    screener = await startFakeScreener({ [MINT]: [pair()] });
    t = await startTestApp({ jobs: false, env: { SCREENER_URL: screener.url } });
    const root = await bootstrapAgent(t);
    const agent = await createAgent(t, root, 'fuzzed');
    const booking = await createBooking(t, agent, '2033-06-01T09:00:00Z', '2033-06-01T10:00:00Z');
    const proposal = await t.rest({
      method: 'POST',
      url: '/api/proposals',
      headers: bearer(agent.token),
      payload: { targetAgentId: root.id, startsAt: '2033-07-01T09:00:00Z', endsAt: '2033-07-01T10:00:00Z' },
    });
    owned = { root, bookingId: booking.id, proposalId: proposal.json<{ id: string }>().id };
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = await connectMcp(t, bearer(agent.token));
    ({ tools } = await client.listTools());
    database = new pg.Client({ connectionString: t.databaseUrl });
    await database.connect();
  });
  afterAll(async () => {
    await database.end();
    await client.close();
    await t.close();
    await screener.close();
  });

  // One connection for the two counts around each of the calls (t.query connects each time).
  let database: pg.Client;
  const counts = async () => (await database.query<{ counts: string; keys: number }>(COUNT_ALL)).rows[0]!;

  it('covers every tool', () => {
    expect(tools.length).toBeGreaterThanOrEqual(9);
  });

  // The tools are read from the server in beforeAll; one test walks them all, so a new tool is covered unnamed.
  it('answers every generated call with a result in the one shape, never a protocol or internal error, writing nothing on an error', async () => {
    const problems = new Map<string, string>();
    let calls = 0;
    for (const tool of tools) {
      const schema = tool.inputSchema as JsonSchema;
      let validate = validators.get(tool.name);
      if (!validate) validators.set(tool.name, (validate = ajv.compile(schema)));
      await fc.assert(
        fc.asyncProperty(validValue(schema, '', owned) as fc.Arbitrary<Record<string, unknown>>, mutations(schema), async (valid, mutation) => {
          calls++;
          if (!validate(valid)) problems.set(`${tool.name} generator`, `generated arguments the schema refuses: ${JSON.stringify(valid)}`);
          const args = mutate(valid, mutation);
          const schemaRefuses = !validate(structuredClone(args));
          const where = `${tool.name} ${mutation.kind} ${mutation.field.slice(0, 20)} = ${JSON.stringify('value' in mutation ? mutation.value : undefined)?.slice(0, 60)}`;
          const kind = (problem: string) => `${tool.name} ${mutation.kind} ${problem}`;
          const before = await counts();
          let answer: Awaited<ReturnType<typeof callTool>>;
          try {
            answer = await callTool(client, tool.name, args);
          } catch (error) {
            problems.set(kind('protocol error'), `${where}: ${String(error).slice(0, 200)}`);
            return;
          }
          if (!answer.isError) {
            if (schemaRefuses) problems.set(kind('accepted'), `${where}: served arguments its schema refuses`);
            if (typeof answer.structured !== 'object' || answer.structured === null) problems.set(kind('no structured content'), where);
            return;
          }
          const body = answer.body as { error?: unknown; message?: unknown; errors?: Record<string, unknown> };
          const shapeHolds =
            typeof body === 'object' &&
            body !== null &&
            Object.keys(body).every((key) => ['error', 'message', 'errors'].includes(key)) &&
            typeof body.error === 'string' &&
            CODES.has(body.error) &&
            typeof body.message === 'string' &&
            (body.errors === undefined || Object.values(body.errors).every((message) => typeof message === 'string'));
          if (!shapeHolds) problems.set(kind('shape'), `${where}: ${JSON.stringify(body).slice(0, 200)}`);
          if (JSON.stringify(answer.structured) !== JSON.stringify(answer.body)) problems.set(kind('structured'), `${where}: structured content differs from the text`);
          if (schemaRefuses) {
            // A long name is named by its prefix (echo.ts: field names of 128 characters, then `…`).
            const namesField = (field: string) => field === mutation.field || field.startsWith(`${mutation.field}.`) || (field.endsWith('…') && mutation.field.startsWith(field.slice(0, -1)));
            const named = Object.keys(body.errors ?? {}).some(namesField);
            if (body.error !== 'validation' || !named) problems.set(kind('not named'), `${where}: ${JSON.stringify(body).slice(0, 200)}`);
          }
          const after = await counts();
          const recordedRefusal = typeof args.idempotencyKey === 'string' && !schemaRefuses && body.error !== 'validation' ? 1 : 0;
          if (after.counts !== before.counts || after.keys - before.keys > recordedRefusal) {
            problems.set(kind('written'), `${where}: ${JSON.stringify(body).slice(0, 200)}, but rows were written`);
          }
        }),
        { numRuns: RUNS_PER_TOOL, seed: SEED, endOnFailure: true },
      );
    }
    expect([...problems.values()]).toEqual([]);
    expect(calls).toBe(RUNS_PER_TOOL * tools.length);
  }, 600_000);
});
