import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { readFileSync } from 'node:fs';
import { ERROR_STATUS } from '../../../src/platform/errors.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn, submitTool, type SignedInUser } from '../../factories/users.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Hostile variables generated from the GraphQL schema for every query and mutation that takes
 * arguments: well-formed variables, then one of them (or one field of an input object) replaced by
 * junk. Never a 5xx or an internal error, every error carries a code from the closed vocabulary (or
 * graphql-js's own for coercion), no stack trace, and an answer with errors writes nothing.
 */
const RUNS_PER_FIELD = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

const SCHEMA = buildSchema(readFileSync(new URL('../../../schema/schema.graphql', import.meta.url), 'utf8'));
const FIELDS = (['query', 'mutation'] as const).flatMap((kind) => {
  const type = kind === 'query' ? SCHEMA.getQueryType() : SCHEMA.getMutationType();
  return Object.values(type?.getFields() ?? {})
    .filter((field) => field.args.length > 0)
    .map((field) => ({ kind, field, key: `${kind === 'query' ? 'Query' : 'Mutation'}.${field.name}` }));
});

/** Codes an answer may carry: the domain's, and those graphql-js and Apollo use for a document or variables that do not fit. */
const KNOWN_CODES = new Set<string>([...Object.keys(ERROR_STATUS), 'BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_REQUEST']);

/** The smallest selection that is valid for a type: its first scalar field, or `__typename`. */
function selectionFor(type: GraphQLOutputType): string {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  const scalar = Object.values(named.getFields()).find((field) => isScalarType(getNamedType(field.type)) || isEnumType(getNamedType(field.type)));
  return ` { ${scalar ? scalar.name : '__typename'} }`;
}

function documentFor(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const declarations = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const uses = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  return `${kind}(${declarations}) { ${field.name}(${uses})${selectionFor(field.type)} }`;
}

interface Owned {
  agent: AgentWithToken;
  bookingId: string;
  proposalId: string;
  webhookId: string;
  toolId: number;
}

/** A value the type accepts; ids are the caller's own rows so that requests reach the services. */
function validValue(type: GraphQLInputType, name: string, owned: Owned): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return validValue(type.ofType, name, owned);
  if (isListType(type)) return fc.array(validValue(type.ofType, name, owned), { maxLength: 2 });
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((value) => value.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return fc.record(Object.fromEntries(fields.map((field) => [field.name, validValue(field.type, field.name, owned)])), {
      requiredKeys: fields.filter((field) => isNonNullType(field.type)).map((field) => field.name),
    });
  }
  switch (type.name) {
    case 'ID':
      return fc.constantFrom(owned.bookingId, owned.proposalId, owned.webhookId, owned.agent.id);
    case 'Int':
      return name.toLowerCase().includes('tool') || name === 'id' ? fc.constant(owned.toolId) : fc.integer({ min: 1, max: 50 });
    case 'Float':
      return fc.double({ min: 0, max: 100, noNaN: true });
    case 'Boolean':
      return fc.boolean();
    case 'DateTimeISO':
      return fc.integer({ min: Date.UTC(2036, 0, 1), max: Date.UTC(2037, 0, 1) }).map((ms) => new Date(ms - (ms % 3_600_000)).toISOString());
    case 'JSONObject':
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
    default:
      return name === 'agentId' || name === 'targetAgentId' ? fc.constant(owned.agent.id) : fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' });
  }
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    '',
    'x'.repeat(70_000),
    '\u0000\u001f\u007f',
    '🧨'.repeat(300),
    '2036-02-30T09:00:00Z',
    '+275760-09-13T00:00:00.001Z',
    '0000-01-01T00:00:00Z',
    'NaN',
    -1,
    0,
    2 ** 31,
    1e308,
    3.5,
    true,
    [],
    {},
    { __proto__: { admin: true } },
    "' or 1=1 --",
  ),
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 50, max: 300 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
);

const TABLES = ['agents', 'bookings', 'booking_slots', 'proposals', 'webhooks', 'booking_events', 'idempotency_keys', 'tools', 'votes', 'users', 'magic_link_tokens'];
const COUNT_ALL = `select ${TABLES.map((table) => `(select count(*) from ${table})`).join(` || ',' || `)} as counts`;

describe('generated hostile GraphQL variables', () => {
  let t: TestApp;
  const mailbox = new Mailbox();
  let owned: Owned;
  let user: SignedInUser;
  let requests = 0;

  beforeAll(async () => {
    t = await startTestApp({ mailer: mailbox, jobs: false });
    const root = await bootstrapAgent(t);
    const agent = await createAgent(t, root, 'fuzzed');
    user = await signIn(t, mailbox);
    const tool = await submitTool(t, user);
    const booking = await createBooking(t, agent, '2035-06-01T09:00:00Z', '2035-06-01T10:00:00Z');
    const proposal = await t.rest({
      method: 'POST',
      url: '/api/proposals',
      headers: bearer(agent.token),
      payload: { targetAgentId: root.id, startsAt: '2035-07-01T09:00:00Z', endsAt: '2035-07-01T10:00:00Z' },
    });
    const webhook = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: 'https://generated.example.com/hook' } });
    owned = { agent, bookingId: booking.id, proposalId: proposal.json<{ id: string }>().id, webhookId: webhook.json<{ id: string }>().id, toolId: tool.id };
  });
  afterAll(() => t.close());

  it('covers every query and mutation that takes arguments', () => {
    expect(FIELDS.length).toBeGreaterThanOrEqual(25);
  });

  it.each(FIELDS)('$key: never a 5xx or an unknown code, nothing written when it answers with errors', async ({ kind, field }) => {
    const query = documentFor(kind, field);
    // Directory writes need a user; everything else an agent (the directory reads ignore it).
    const headers = ['submitTool', 'toggleVote'].includes(field.name) ? bearer(user.token) : bearer(owned.agent.token);
    const valid = fc.record(Object.fromEntries(field.args.map((arg) => [arg.name, validValue(arg.type, arg.name, owned)])));
    const target = fc.oneof(
      fc.record({ arg: fc.constantFrom(...field.args.map((arg) => arg.name)), inner: fc.constant<string | undefined>(undefined) }),
      ...field.args
        .filter((arg) => isInputObjectType(getNamedType(arg.type)))
        .map((arg) => {
          const inputType = getNamedType(arg.type);
          const names = isInputObjectType(inputType) ? Object.keys(inputType.getFields()) : [];
          return fc.record({ arg: fc.constant(arg.name), inner: fc.constantFrom<string | undefined>(...names) });
        }),
    );
    const problems = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(valid, target, hostileValue, async (variables, { arg, inner }, junk) => {
        const mutated: Record<string, unknown> = { ...variables };
        if (inner === undefined) mutated[arg] = junk;
        else mutated[arg] = { ...(typeof variables[arg] === 'object' && variables[arg] !== null ? variables[arg] : {}), [inner]: junk };
        const before = await t.query<{ counts: string }>(COUNT_ALL);
        const response = await t.rest({
          method: 'POST',
          url: '/graphql',
          remoteAddress: `10.98.${Math.floor(++requests / 250) % 250}.${requests % 250}`,
          headers,
          payload: { query, variables: mutated },
        });
        const where = `${inner ? `${arg}.${inner}` : arg} = ${JSON.stringify(junk)?.slice(0, 60)}`;
        if (response.statusCode >= 500) problems.set(`${response.statusCode}`, `${where}: ${response.statusCode} ${response.body.slice(0, 200)}`);
        if (response.body.includes('    at ')) problems.set('stack', `${where}: a stack trace`);
        const body = response.json<{ errors?: { extensions?: { code?: string } }[] }>();
        for (const error of body.errors ?? []) {
          const code = error.extensions?.code;
          if (!code || !KNOWN_CODES.has(code)) problems.set(`code ${String(code)}`, `${where}: ${JSON.stringify(error).slice(0, 200)}`);
        }
        if (body.errors?.length && (await t.query<{ counts: string }>(COUNT_ALL))[0]!.counts !== before[0]!.counts) {
          problems.set('written', `${where}: answered with errors but rows were written`);
        }
      }),
      { numRuns: RUNS_PER_FIELD, seed: SEED, endOnFailure: true },
    );
    expect([...problems.values()]).toEqual([]);
  }, 120_000);
});
