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
 * Hostile arguments generated from the GraphQL schema for every query and mutation that takes
 * arguments, and every field with arguments one level below a root field without any (`me { children }`):
 * well-formed arguments, then one of them (or one field of an input object) replaced by junk, sent
 * either as variables or written inline in the document as GraphQL literals (strings with U+0000,
 * control characters, lone surrogates or 900,000 characters; numbers past 32, 53 and 64 bits, 1e308, -0).
 * Never a 5xx or an internal error, every error carries a code from the closed vocabulary (or
 * graphql-js's own for coercion), no stack trace, an answer with errors is at most 16 KiB and writes nothing.
 */
const RUNS_PER_FIELD = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
/** An error answer never grows with the input it refuses (docs/reliability.md: Reliability and security). */
const ERROR_ANSWER_MAX_BYTES = 16 * 1024;

const SCHEMA = buildSchema(readFileSync(new URL('../../../schema/schema.graphql', import.meta.url), 'utf8'));
interface FuzzedField {
  kind: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
  /** The root field without arguments the field is selected under, if it is not a root field itself. */
  under?: string;
  key: string;
}
const ROOT_FIELDS: FuzzedField[] = (['query', 'mutation'] as const).flatMap((kind) => {
  const type = kind === 'query' ? SCHEMA.getQueryType() : SCHEMA.getMutationType();
  return Object.values(type?.getFields() ?? {})
    .filter((field) => field.args.length > 0)
    .map((field) => ({ kind, field, key: `${kind === 'query' ? 'Query' : 'Mutation'}.${field.name}` }));
});
const NESTED_FIELDS: FuzzedField[] = Object.values(SCHEMA.getQueryType()!.getFields())
  .filter((root) => root.args.length === 0 && isObjectType(getNamedType(root.type)))
  .flatMap((root) => {
    const type = getNamedType(root.type);
    return Object.values(isObjectType(type) ? type.getFields() : {})
      .filter((field) => field.args.length > 0)
      .map((field) => ({ kind: 'query' as const, field, under: root.name, key: `Query.${root.name}.${field.name}` }));
  });
const FIELDS = [...ROOT_FIELDS, ...NESTED_FIELDS];

/** Codes an answer may carry: the domain's, and those graphql-js and Apollo use for a document or variables that do not fit. */
const KNOWN_CODES = new Set<string>([...Object.keys(ERROR_STATUS), 'BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_REQUEST']);

/** The smallest selection that is valid for a type: its first scalar field, or `__typename`. */
function selectionFor(type: GraphQLOutputType): string {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  const scalar = Object.values(named.getFields()).find((field) => isScalarType(getNamedType(field.type)) || isEnumType(getNamedType(field.type)));
  return ` { ${scalar ? scalar.name : '__typename'} }`;
}

/** The operation with its arguments as variables, or (given `inline`, each argument's literal text) written into the document. */
function documentFor({ kind, field, under }: FuzzedField, inline?: Record<string, string>): string {
  const declarations = inline ? '' : `(${field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ')})`;
  const uses = field.args
    .filter((arg) => !inline || inline[arg.name] !== undefined)
    .map((arg) => `${arg.name}: ${inline ? inline[arg.name] : `$${arg.name}`}`)
    .join(', ');
  const selection = `${field.name}${uses ? `(${uses})` : ''}${selectionFor(field.type)}`;
  return `${kind}${declarations} { ${under ? `${under} { ${selection} }` : selection} }`;
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * A value as a GraphQL literal of `type`: enum values bare, strings as JSON writes them (GraphQL
 * reads the same escapes; a lone surrogate becomes a `\uD800` escape, which GraphQL refuses), object
 * keys that are no GraphQL name renamed. `RawLiteral`s are written as they are.
 */
function literal(value: unknown, type: GraphQLInputType | undefined): string {
  const named = type && getNamedType(type);
  if (value instanceof RawLiteral) return value.text;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return named && isEnumType(named) && NAME.test(value) && value !== 'true' && value !== 'false' && value !== 'null' ? value : JSON.stringify(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : Number.isFinite(value) ? String(value) : '1e400';
  if (typeof value === 'boolean') return String(value);
  const inner = type && isNonNullType(type) ? type.ofType : type;
  if (Array.isArray(value)) return `[${value.map((item) => literal(item, inner && isListType(inner) ? inner.ofType : undefined)).join(', ')}]`;
  const fields = named && isInputObjectType(named) ? named.getFields() : {};
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([key, item], index) => `${NAME.test(key) ? key : `k${index}`}: ${literal(item, fields[key]?.type)}`)
    .join(', ')}}`;
}

/** Literal text that no JSON value prints as. */
class RawLiteral {
  constructor(readonly text: string) {}
}

/** What a hostile client writes inline: numbers past every integer range, strings JSON cannot carry as they are. */
const hostileLiteral: fc.Arbitrary<RawLiteral> = fc
  .constantFrom(
    '2147483648',
    '-2147483649',
    '9007199254740993',
    '18446744073709551616',
    '-9223372036854775809',
    '1e17',
    '1.15e23',
    '1e308',
    '1e400',
    '-0',
    '-0.0',
    '0x10',
    '"a\\u0000b"',
    '"\\u0000"',
    '"\\uD800"',
    '"\\uDC00x"',
    '"\\u{1F9E8}"',
    '"\u0001\u001f"',
    '"""\u0000 block"""',
    '["a\\u0000", 1e308]',
    '{name: "\\u0000"}',
  )
  .map((text) => new RawLiteral(text));

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
      if (name === 'categoryId') return fc.constant(1);
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
      if (name === 'agentId' || name === 'targetAgentId') return fc.constant(owned.agent.id);
      // Values the services take, so that a case with one bad field reaches as far as it can (the writes).
      if (name === 'url' || name === 'apiEndpoint') return fc.uuid().map((id) => `https://${id}.example.com/`);
      if (name === 'email') return fc.emailAddress();
      return fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' }).filter((text) => text.trim() !== '');
  }
}

// The named cases three times as often as generated JSON: each is a class of input that once reached SQL or a 500.
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      '',
      'x'.repeat(70_000),
      'x'.repeat(900_000),
      '\u0000\u001f\u007f',
      'a\u0000',
      '\ud800',
      'x\udc00y',
      '🧨'.repeat(300),
      '2036-02-30T09:00:00Z',
      '+275760-09-13T00:00:00.001Z',
      '0000-01-01T00:00:00Z',
      'NaN',
      '9007199254740993',
      '1e17',
      -1,
      0,
      -0,
      2 ** 31,
      -(2 ** 31) - 1,
      2 ** 53 + 2,
      2 ** 63,
      2 ** 64,
      1e17,
      1.15e23,
      1e308,
      3.5,
      true,
      [],
      {},
      { __proto__: { admin: true } },
      "' or 1=1 --",
    ),
  },
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 50, max: 300 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
);

/**
 * JSON text of a value nested deeper than a recursive walk of it can go (V8's own JSON.stringify gives
 * up near 6,000 levels), sent as it is in place of a variable.
 */
class DeepJson {
  constructor(readonly depth: number) {}
  get text(): string {
    return `${'{"a":['.repeat(this.depth)}1${']}'.repeat(this.depth)}`;
  }
}
const deepVariable = fc.constantFrom(3_000, 100_000).map((depth) => new DeepJson(depth));

/** Per scalar type, the inputs that reached SQL or answered 500 before (issue 24), tried on every argument of that type. */
const KNOWN_CLASSES: Record<string, unknown[]> = {
  ID: ['', 'a\u0000', new RawLiteral('9007199254740993')],
  String: ['', 'a\u0000', 'x'.repeat(100_000)],
  Int: [new RawLiteral('2147483648'), new RawLiteral('9007199254740993'), new RawLiteral('1e17')],
  Float: [new RawLiteral('1e400'), new RawLiteral('-0')],
  DateTimeISO: ['', 'a\u0000'],
  JSONObject: [{ note: 'a\u0000' }],
};

/** The arguments of scalar type, and the scalar fields of input-object arguments, with their scalar's name. */
function scalarLeaves(field: GraphQLField<unknown, unknown>): { arg: string; inner: string | undefined; scalar: string }[] {
  return field.args.flatMap((arg): { arg: string; inner: string | undefined; scalar: string }[] => {
    const type = getNamedType(arg.type);
    if (isScalarType(type)) return [{ arg: arg.name, inner: undefined, scalar: type.name }];
    if (!isInputObjectType(type)) return [];
    return Object.values(type.getFields())
      .map((inner) => ({ inner, named: getNamedType(inner.type) }))
      .filter(({ named }) => isScalarType(named))
      .map(({ inner, named }) => ({ arg: arg.name, inner: inner.name, scalar: named.name }));
  });
}

const TABLES = ['agents', 'bookings', 'booking_slots', 'proposals', 'webhooks', 'booking_events', 'idempotency_keys', 'tools', 'votes', 'users', 'magic_link_tokens'];
const COUNT_ALL = `select ${TABLES.map((table) => `(select count(*) from ${table})`).join(` || ',' || `)} as counts`;

describe('generated hostile GraphQL arguments', () => {
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

  it('covers every query and mutation that takes arguments, and the fields with arguments below them', () => {
    expect(ROOT_FIELDS.length).toBeGreaterThanOrEqual(25);
    expect(NESTED_FIELDS.map(({ key }) => key)).toContain('Query.me.children');
  });

  it.each(FIELDS)('$key: never a 5xx or an unknown code, a bounded answer, nothing written when it answers with errors', async (fuzzed) => {
    const { field } = fuzzed;
    const query = documentFor(fuzzed);
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
    // Half the cases write the arguments inline, where junk may also be literal text no JSON value prints as.
    const sent = fc.oneof(
      fc.record({ inline: fc.constant(false), junk: fc.oneof({ arbitrary: hostileValue, weight: 15 }, { arbitrary: deepVariable, weight: 1 }) }),
      fc.record({ inline: fc.constant(true), junk: fc.oneof(hostileValue, hostileLiteral) }),
    );
    /** Sends the valid arguments with one of them (or one field of an input) replaced by `junk`, and records what is wrong with the answer. */
    const attempt = async (variables: Record<string, unknown>, { arg, inner }: { arg: string; inner: string | undefined }, { inline, junk }: { inline: boolean; junk: unknown }) => {
      const mutated: Record<string, unknown> = { ...variables };
      if (inner === undefined) mutated[arg] = junk;
      else mutated[arg] = { ...(typeof variables[arg] === 'object' && variables[arg] !== null ? variables[arg] : {}), [inner]: junk };
      // A deep value travels as raw JSON text: it is what a client sends, and no JSON.stringify could write it.
      const deep = junk instanceof DeepJson ? junk : undefined;
      const payload = inline
        ? { query: documentFor(fuzzed, Object.fromEntries(field.args.filter((a) => a.name in mutated).map((a) => [a.name, literal(mutated[a.name], a.type)]))) }
        : deep
          ? JSON.stringify({ query, variables: mutated }, (_key, value: unknown) => (value instanceof DeepJson ? '@deep@' : value)).replace('"@deep@"', deep.text)
          : { query, variables: mutated };
      const before = await t.query<{ counts: string }>(COUNT_ALL);
      const response = await t.rest({
        method: 'POST',
        url: '/graphql',
        remoteAddress: `10.98.${Math.floor(++requests / 250) % 250}.${requests % 250}`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
      });
      const shown = junk instanceof RawLiteral ? junk.text : junk instanceof DeepJson ? `${junk.depth} levels deep` : JSON.stringify(junk);
      const where = `${inline ? 'inline ' : ''}${inner ? `${arg}.${inner}` : arg} = ${shown?.slice(0, 60)}`;
      if (response.statusCode >= 500) problems.set(`${response.statusCode}`, `${where}: ${response.statusCode} ${response.body.slice(0, 200)}`);
      if (response.body.includes('    at ')) problems.set('stack', `${where}: a stack trace`);
      const body = response.json<{ errors?: { extensions?: { code?: string } }[] }>();
      if (body.errors?.length && response.body.length > ERROR_ANSWER_MAX_BYTES) problems.set('size', `${where}: an error answer of ${response.body.length} bytes`);
      for (const error of body.errors ?? []) {
        const code = error.extensions?.code;
        if (!code || !KNOWN_CODES.has(code)) problems.set(`code ${String(code)}`, `${where}: ${JSON.stringify(error).slice(0, 200)}`);
      }
      if (body.errors?.length && (await t.query<{ counts: string }>(COUNT_ALL))[0]!.counts !== before[0]!.counts) {
        problems.set('written', `${where}: answered with errors but rows were written`);
      }
    };
    // First every scalar the operation takes, once with each class of input that once reached SQL written
    // inline (an empty id, U+0000, numbers past 32 and 53 bits); then generated cases.
    const [someValid] = fc.sample(valid, { seed: SEED, numRuns: 1 });
    for (const leaf of scalarLeaves(field)) {
      for (const junk of KNOWN_CLASSES[leaf.scalar] ?? []) await attempt(someValid!, leaf, { inline: true, junk });
    }
    await fc.assert(fc.asyncProperty(valid, target, sent, attempt), { numRuns: RUNS_PER_FIELD, seed: SEED, endOnFailure: true });
    expect([...problems.values()]).toEqual([]);
  }, 120_000);
});
