import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import * as fc from 'fast-check';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn, submitTool } from '../../factories/users.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Hostile input generated from each REST operation's own schema in /openapi.json: a well-formed request,
 * then one mutation of it (a field of the wrong type, missing or extra, huge, control characters, bad
 * dates, numbers as strings, nested junk, a broken path or query parameter, malformed JSON, another
 * content type, numbers past every integer range, 900,000 characters). Every answer must be a documented
 * status with the documented body, never a 5xx, an error answer at most 16 KiB whatever it refuses, and an
 * error must leave every table as it was. Seeded: a failure prints the seed and path to replay it.
 * `npm run fuzz` runs the same with FUZZ_RUNS (default here 100 per operation; `npm run fuzz` 600).
 */
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const ADMIN_TOKEN = 'generated-input-admin-token-0123456789';
/** An error answer never grows with the input it refuses (docs/reliability.md: Reliability and security). */
const ERROR_ANSWER_MAX_BYTES = 16 * 1024;

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
};
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: JsonSchema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
  security?: Record<string, string[]>[];
}

/** A value the schema accepts (kept small: the point is the mutation, not the valid part). */
function validValue(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf ?? schema.oneOf) return fc.oneof(...(schema.anyOf ?? schema.oneOf)!.map(validValue));
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'date-time') return fc.integer({ min: Date.UTC(2034, 0, 1), max: Date.UTC(2035, 0, 1) }).map((ms) => new Date(ms - (ms % 3_600_000)).toISOString());
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.format === 'uri') return fc.constant('https://generated.example.com/hook');
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter((text) => text.length >= (schema.minLength ?? 0) && text.length <= (schema.maxLength ?? Infinity));
      return fc.string({ minLength: Math.max(1, schema.minLength ?? 1), maxLength: Math.min(schema.maxLength ?? 20, 20), unit: 'grapheme-ascii' });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? 1, max: Math.min(schema.maximum ?? 1_000, 1_000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1_000, 1_000), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(validValue(schema.items ?? {}), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const properties = schema.properties ?? {};
      return fc.record(Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, validValue(property)])), {
        requiredKeys: (schema.required ?? []).filter((key) => key in properties),
      });
    }
    default:
      return fc.constant('value');
  }
}

/** What a careless or hostile client puts where a value belongs. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    '',
    ' ',
    'x'.repeat(70_000),
    'x'.repeat(900_000),
    '\u0000\u0001\u001f\u007f',
    'a\u0000',
    '\ud800',
    'x\udc00y',
    '🧨'.repeat(300),
    '2030-02-30T09:00:00Z',
    '0000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.001Z',
    '2030-01-01T25:00:00Z',
    '2030-01-01T09:00:00+99:00',
    '2030-01-01',
    'NaN',
    '1e309',
    '1e17',
    '1.15e23',
    '9007199254740993',
    '18446744073709551616',
    '-9223372036854775809',
    '2147483648',
    '-0',
    '-1',
    '0x10',
    "' or 1=1 --",
    '../../etc/passwd',
    '{"$gt":""}',
    -1,
    0,
    -0,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 63,
    2 ** 64,
    1e17,
    1.15e23,
    1e308,
    Number.MAX_SAFE_INTEGER + 2,
    3.5,
    true,
    [],
    {},
    { __proto__: { admin: true } },
  ),
  fc.integer().map(String),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 50, max: 400 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
);

/** One change to a well-formed request. */
type Mutation =
  | { kind: 'replace field'; field: string; value: unknown }
  | { kind: 'drop field'; field: string }
  | { kind: 'extra field'; field: string; value: unknown }
  | { kind: 'replace body'; value: unknown }
  | { kind: 'raw body'; contentType: string; raw: string }
  | { kind: 'path parameter'; name: string; value: string }
  | { kind: 'query parameter'; name: string; value: string };

const hostileText: fc.Arbitrary<string> = hostileValue.map((value) => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'undefined'));

function mutations(operation: Operation, bodySchema: JsonSchema | undefined): fc.Arbitrary<Mutation> {
  const options: fc.Arbitrary<Mutation>[] = [];
  const fields = Object.keys(bodySchema?.properties ?? {});
  if (bodySchema) {
    options.push(
      fc.record({ kind: fc.constant('replace body' as const), value: hostileValue }),
      fc.record({
        kind: fc.constant('raw body' as const),
        contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'),
        raw: fc.constantFrom(
          '{"a":',
          '{',
          '[1,2',
          'null',
          '"text"',
          'a=1&b=2',
          '{"startsAt": 1e99999}',
          '\u0000',
          '',
          '{"name": 18446744073709551616, "url": -0.0e-400}',
          // Deeper than V8's JSON.stringify or any recursive walk of it goes.
          `${'{"a":['.repeat(100_000)}1${']}'.repeat(100_000)}`,
        ),
      }),
      fc.record({ kind: fc.constant('extra field' as const), field: fc.constantFrom('extra', '__proto__', 'constructor', 'id', 'x'.repeat(300)), value: hostileValue }),
    );
    if (fields.length) {
      options.push(
        fc.record({ kind: fc.constant('replace field' as const), field: fc.constantFrom(...fields), value: hostileValue }),
        fc.record({ kind: fc.constant('drop field' as const), field: fc.constantFrom(...fields) }),
      );
    }
  }
  const pathNames = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
  // An empty segment addresses another route (`/api/tools/` is the list), not this one.
  if (pathNames.length) options.push(fc.record({ kind: fc.constant('path parameter' as const), name: fc.constantFrom(...pathNames), value: hostileText.filter((text) => text !== '') }));
  const queryNames = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
  if (queryNames.length) options.push(fc.record({ kind: fc.constant('query parameter' as const), name: fc.constantFrom(...queryNames), value: hostileText }));
  return fc.oneof(...options);
}

/** Inputs that reached SQL or answered 500 before (issue 24): numbers past every integer range, U+0000, empty and oversized text. */
const KNOWN_IN_URLS = ['', 'a\u0000', '1e17', '9007199254740993', '1.15e23', '18446744073709551616', 'x'.repeat(100_000)];
/** In a JSON body U+0000 is refused whole and numbers are numbers: empty and oversized text, and numbers past every integer range. */
const KNOWN_IN_BODIES = { string: ['', 'x'.repeat(100_000)], number: [2 ** 63, 1e17, -0, 1e308] };

/** Each path and query parameter and each body field with each known class of its kind (an empty path segment names another route). */
function knownClassMutations(operation: Operation, bodySchema: JsonSchema | undefined): Mutation[] {
  const parameters = operation.parameters ?? [];
  const kindOf = (schema: JsonSchema) => ([schema.type].flat().some((type) => type === 'integer' || type === 'number') ? 'number' : 'string');
  return [
    ...parameters
      .filter((parameter) => parameter.in === 'path')
      .flatMap((parameter) => KNOWN_IN_URLS.filter((value) => value !== '').map((value): Mutation => ({ kind: 'path parameter', name: parameter.name, value }))),
    ...parameters.filter((parameter) => parameter.in === 'query').flatMap((parameter) => KNOWN_IN_URLS.map((value): Mutation => ({ kind: 'query parameter', name: parameter.name, value }))),
    ...Object.entries(bodySchema?.properties ?? {}).flatMap(([field, schema]) => KNOWN_IN_BODIES[kindOf(schema)].map((value): Mutation => ({ kind: 'replace field', field, value }))),
  ];
}

/** Tables an error answer must leave as they were (one round trip). */
const TABLES = ['calendar_feeds', 'agents', 'bookings', 'booking_slots', 'proposals', 'webhooks', 'booking_events', 'idempotency_keys', 'tools', 'votes', 'users', 'price_snapshots', 'price_rows'];
const COUNT_ALL = `select ${TABLES.map((table) => `(select count(*) from ${table})`).join(' || \',\' || ')} as counts`;

const DOCUMENT = JSON.parse(readFileSync(new URL('../../../schema/openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, Operation>> };
/** Operations a client can shape (a body, a path or query parameter). */
const OPERATIONS = Object.entries(DOCUMENT.paths)
  .flatMap(([path, byMethod]) =>
    Object.entries(byMethod)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation })),
  )
  .filter(({ path, operation }) => operation.requestBody !== undefined || path.includes('{') || (operation.parameters ?? []).some((parameter) => parameter.in === 'query'));

describe('generated hostile input on every REST operation', () => {
  let t: TestApp;
  const mailbox = new Mailbox();
  const ajv = new Ajv({ strict: false, allErrors: false });
  (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
  const responseValidators = new Map<string, ValidateFunction>();
  let agent: AgentWithToken;
  let credentialFor: (operation: Operation) => Record<string, string>;
  /** The value of each path parameter in a well-formed request: the fuzzed agent's own rows. */
  let pathValueFor: (path: string, name: string) => string;
  let requestCounter = 0;

  beforeAll(async () => {
    t = await startTestApp({ mailer: mailbox, jobs: false, env: { ADMIN_TOKEN } });
    const root = await bootstrapAgent(t);
    agent = await createAgent(t, root, 'fuzzed');
    const user = await signIn(t, mailbox);
    const tool = await submitTool(t, user);
    const booking = await createBooking(t, agent, '2033-06-01T09:00:00Z', '2033-06-01T10:00:00Z');
    const proposal = await t.rest({
      method: 'POST',
      url: '/api/proposals',
      headers: bearer(agent.token),
      payload: { targetAgentId: root.id, startsAt: '2033-07-01T09:00:00Z', endsAt: '2033-07-01T10:00:00Z' },
    });
    const webhook = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: 'https://generated.example.com/hook' } });
    const feed = await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) });
    const owned: [prefix: string, id: string][] = [
      ['/api/calendar-feeds/{id}', feed.json<{ id: string }>().id],
      ['/api/agents/{id}', agent.id],
      ['/api/bookings/{id}', booking.id],
      ['/api/proposals/{id}', proposal.json<{ id: string }>().id],
      ['/api/webhooks/{id}', webhook.json<{ id: string }>().id],
      ['/api/tools/{id}', String(tool.id)],
    ];
    const byName: Record<string, string> = { mint: 'So11111111111111111111111111111111111111112', gpu_slug: 'h100' };
    pathValueFor = (path, name) => owned.find(([prefix]) => path.startsWith(prefix))?.[1] ?? byName[name]!;
    credentialFor = (operation) => {
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      if (schemes.includes('agentToken')) return bearer(agent.token);
      if (schemes.includes('directoryJwt')) return bearer(user.token);
      if (schemes.includes('adminToken')) return bearer(ADMIN_TOKEN);
      return {};
    };
    // The committed document is the one the server serves (openapi.test.ts); read here before the tests are named.
    expect((await t.rest({ method: 'GET', url: '/openapi.json' })).json()).toEqual(DOCUMENT);
  });
  afterAll(() => t.close());

  const counts = async () => (await t.query<{ counts: string }>(COUNT_ALL))[0]!.counts;

  const pathWith = (path: string, override?: { name: string; value: string }) =>
    path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      // A lone surrogate cannot travel in a URL: the client's encoder would throw before sending.
      override?.name === name ? encodeURIComponent(override.value.toWellFormed()) : pathValueFor(path, name),
    );

  const validatorFor = (key: string, status: number, schema: JsonSchema) => {
    const cacheKey = `${key} ${status}`;
    let validate = responseValidators.get(cacheKey);
    if (!validate) responseValidators.set(cacheKey, (validate = ajv.compile(schema)));
    return validate;
  };

  it('covers most of the API', () => {
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(20);
  });

  it.each(OPERATIONS)('$key: a documented status and body for every generated request, never a 5xx, a bounded error answer, nothing written on an error', async ({ key, method, path, operation }) => {
    const problems: string[] = [];
    let cases = 0;
    {
      const bodySchema = operation.requestBody?.content['application/json']?.schema;
      // Required query parameters are part of a well-formed request; the mutation then replaces one parameter.
      const required = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' && parameter.required);
      const validQuery = fc.record(Object.fromEntries(required.map((parameter) => [parameter.name, validValue(parameter.schema)])));
      const arbitrary = fc.tuple(bodySchema ? validValue(bodySchema) : fc.constant(undefined), mutations(operation, bodySchema), validQuery);
      /** Sends the well-formed request with one mutation, and records what is wrong with the answer. */
      const attempt = async ([validBody, mutation, validParameters]: [unknown, Mutation, Record<string, unknown>]) => {
        const query: Record<string, unknown> = { ...validParameters };
        cases++;
        let body: unknown = validBody;
        let raw: { contentType: string; raw: string } | undefined;
        let url = pathWith(path, mutation.kind === 'path parameter' ? mutation : undefined);
        switch (mutation.kind) {
          case 'replace field':
            body = { ...(validBody as object), [mutation.field]: mutation.value };
            break;
          case 'drop field': {
            const copy = { ...(validBody as Record<string, unknown>) };
            delete copy[mutation.field];
            body = copy;
            break;
          }
          case 'extra field':
            body = { ...(validBody as object), [mutation.field]: mutation.value };
            break;
          case 'replace body':
            body = mutation.value;
            break;
          case 'raw body':
            raw = mutation;
            break;
          case 'query parameter':
            query[mutation.name] = mutation.value;
            break;
          case 'path parameter':
            break;
        }
        const search = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)])).toString();
        if (search) url += `?${search}`;
        const before = await counts();
        const response = await t.rest({
          method: method as 'POST',
          url,
          remoteAddress: `10.99.${Math.floor(++requestCounter / 250) % 250}.${requestCounter % 250}`,
          headers: { ...credentialFor(operation), ...(raw ? { 'content-type': raw.contentType } : {}) },
          ...(raw ? { payload: raw.raw } : body === undefined ? {} : { payload: JSON.stringify(body) ?? 'null', headers: { ...credentialFor(operation), 'content-type': 'application/json' } }),
        });
        const where = `${key} ${mutation.kind} ${JSON.stringify(mutation).slice(0, 120)}`;
        const documented = operation.responses[String(response.statusCode)];
        if (response.statusCode >= 500 && !documented) problems.push(`${where}: ${response.statusCode} ${response.body.slice(0, 200)}`);
        else if (!documented) problems.push(`${where}: undocumented ${response.statusCode} ${response.body.slice(0, 200)}`);
        else {
          const schema = documented.content?.['application/json']?.schema;
          if (schema && response.statusCode !== 204) {
            let parsed: unknown;
            try {
              parsed = JSON.parse(response.body);
            } catch {
              problems.push(`${where}: ${response.statusCode} is not JSON: ${response.body.slice(0, 120)}`);
            }
            const validate = validatorFor(key, response.statusCode, schema);
            if (parsed !== undefined && !validate(parsed)) problems.push(`${where}: ${response.statusCode} body not as documented: ${response.body.slice(0, 160)}`);
          }
          if (response.body.includes('    at ')) problems.push(`${where}: a stack trace in the body`);
        }
        if (response.statusCode >= 400 && response.body.length > ERROR_ANSWER_MAX_BYTES) problems.push(`${where}: an error answer of ${response.body.length} bytes`);
        if (response.statusCode >= 400 && (await counts()) !== before) problems.push(`${where}: ${response.statusCode} but rows were written`);
      };
      // First every parameter and body field once with each class of input that once reached SQL or a 500
      // (issue 24); then generated cases.
      const [[someBody, , someParameters]] = fc.sample(arbitrary, { seed: SEED, numRuns: 1 }) as [[unknown, Mutation, Record<string, unknown>]];
      for (const mutation of knownClassMutations(operation, bodySchema)) await attempt([someBody, mutation, someParameters]);
      const sweep = cases;
      await fc.assert(fc.asyncProperty(arbitrary, attempt), { numRuns: RUNS_PER_OPERATION, seed: SEED, endOnFailure: true });
      cases -= sweep;
    }
    // One example of each kind of problem (the same mistake tends to repeat with every run).
    const firstOfEach = new Map<string, string>();
    for (const problem of problems) {
      const kind = problem.replace(/ \{.*?\}: /, ': ').replace(/: (undocumented )?(\d{3}).*/, ': $1$2');
      if (!firstOfEach.has(kind)) firstOfEach.set(kind, problem);
    }
    expect([...firstOfEach.values()]).toEqual([]);
    expect(cases).toBe(RUNS_PER_OPERATION);
  }, 120_000);
});
