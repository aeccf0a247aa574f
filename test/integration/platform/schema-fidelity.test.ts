import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import * as fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { startFakeScreener } from '../../factories/fake-screener.js';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn, type SignedInUser } from '../../factories/users.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * The OpenAPI document says what the server enforces, so that schema-driven clients and fuzzers send
 * nothing the server refuses for its form: for the rules a schema can state (a mint's pattern, URLs'
 * `format: uri` and scheme, an e-mail's `format: email`, `page`'s maximum), every value the published
 * schema accepts is taken by the REST route, and GraphQL, which has no such schema, refuses a value for
 * its form exactly when the published schema refuses it (one rule, from one constant). Values are
 * generated (seeded), well-formed and not, around each rule.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const TIMEOUT_MS = 30_000 + RUNS * 300;

type JsonSchema = Record<string, unknown>;
const DOCUMENT = JSON.parse(readFileSync(new URL('../../../schema/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { parameters?: { name: string; schema: JsonSchema }[]; requestBody?: { content: { 'application/json': { schema: { properties: Record<string, JsonSchema> } } } } }>>;
};
const ajv = new Ajv({ strict: false });
(addFormatsModule as unknown as (instance: Ajv) => Ajv)(ajv);
const parameterSchema = (path: string, method: string, name: string) => DOCUMENT.paths[path]![method]!.parameters!.find((parameter) => parameter.name === name)!.schema;
const bodySchema = (path: string, method: string, property: string) => DOCUMENT.paths[path]![method]!.requestBody!.content['application/json'].schema.properties[property]!;
/** What the schema cannot say about a URL, and its description does: a WHATWG URL parser must read it. */
const whatwgReads = (text: string) => URL.canParse(text);
const accepts = (schema: JsonSchema) => {
  const validate = ajv.compile(schema);
  return (value: unknown) => validate(value);
};

/** Text around a URL rule: well-formed http(s) URLs on an IP address, and each with one character changed, added or dropped. */
const ipUrl = fc
  .tuple(
    fc.constantFrom('http', 'https', 'HTTPS', 'ftp', 'javascript', 'http:', 'https:/'),
    fc.constantFrom('127.0.0.1', '127.0.0.1:8080', '[::1]', 'user:pw@127.0.0.1', '@127.0.0.1', ':80', ''),
    fc.webPath(),
    fc.option(fc.webQueryParameters(), { nil: undefined }),
    fc.option(fc.webFragments(), { nil: undefined }),
  )
  .map(([scheme, authority, path, query, fragment]) => `${scheme}://${authority}${path}${query === undefined ? '' : `?${query}`}${fragment === undefined ? '' : `#${fragment}`}`);
const nearUrl = fc.oneof(
  ipUrl,
  fc.tuple(ipUrl, fc.nat(), fc.constantFrom(' ', '"', '<', '\\', '^', '`', '{', '|', 'é', '中', '%', '%zz', '#', '?', '@', '[', ']', '\t')).map(([url, at, junk]) => {
    const position = at % (url.length + 1);
    return `${url.slice(0, position)}${junk}${url.slice(position)}`;
  }),
  fc.tuple(ipUrl, fc.nat()).map(([url, at]) => url.slice(0, at % url.length) + url.slice((at % url.length) + 1)),
  fc.string({ maxLength: 30 }),
);

describe('the REST schema and the server refuse the same values', () => {
  let t: TestApp;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  const mailbox = new Mailbox();
  let agent: AgentWithToken;
  let user: SignedInUser;
  let request = 0;
  /** Each request from its own address: the sign-in and token budgets count per address. */
  const address = () => `10.77.${Math.floor(++request / 250) % 250}.${request % 250}`;

  beforeAll(async () => {
    screener = await startFakeScreener({});
    t = await startTestApp({ mailer: mailbox, jobs: false, env: { SCREENER_URL: screener.url } });
    agent = await bootstrapAgent(t);
    user = await signIn(t, mailbox);
  });
  afterAll(async () => {
    await t.close();
    await screener.close();
  });

  const graphql = async (query: string, variables: Record<string, unknown>, token?: string) =>
    (
      await t.rest({ method: 'POST', url: '/graphql', remoteAddress: address(), headers: token ? bearer(token) : {}, payload: { query, variables } })
    ).json<{ data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string; errors?: Record<string, string> } }[] }>();
  /** The field map of a GraphQL validation error, if the answer is one. */
  const refusedFields = (answer: Awaited<ReturnType<typeof graphql>>) =>
    answer.errors?.find((error) => error.extensions?.code === 'validation')?.extensions?.errors ?? {};

  it('mint: every value the pattern accepts is asked of the screener, every other is 400 naming mint', async () => {
    const schemaAccepts = accepts(parameterSchema('/v1/tokens/{mint}/safety', 'get', 'mint'));
    const mint = fc.oneof(fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/), fc.stringMatching(/^[0-9A-Za-z]{30,46}$/), fc.string({ minLength: 1, maxLength: 50 }));
    await fc.assert(
      fc.asyncProperty(mint, async (value) => {
        const response = await t.rest({ method: 'GET', url: `/v1/tokens/${encodeURIComponent(value.toWellFormed())}/safety`, remoteAddress: address() });
        // 404: the fake screener knows no pairs for it; it was asked.
        expect([value, response.statusCode === 400]).toEqual([value, !schemaAccepts(value.toWellFormed())]);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, TIMEOUT_MS);

  it('e-mail: REST takes every address format: email accepts, and GraphQL refuses exactly the others', async () => {
    const schema = bodySchema('/api/auth/magic-link', 'post', 'email');
    expect(schema).toMatchObject({ format: 'email' });
    const schemaAccepts = accepts(schema);
    const email = fc.oneof(fc.emailAddress(), fc.emailAddress().map((text) => text.replace('@', '@@')), fc.emailAddress().map((text) => text.replace(/\.[^.]*$/, '')), fc.string({ maxLength: 30 }));
    await fc.assert(
      fc.asyncProperty(email, async (value) => {
        const rest = await t.rest({ method: 'POST', url: '/api/auth/magic-link', remoteAddress: address(), payload: { email: value } });
        if (schemaAccepts(value)) expect([value, rest.statusCode]).toEqual([value, 200]);
        // GraphQL forgives surrounding white space (the address is trimmed); the rule is the same.
        if (value.trim() === value) {
          const answer = await graphql('mutation($email: String!) { requestMagicLink(email: $email) }', { email: value });
          expect([value, 'email' in refusedFields(answer)]).toEqual([value, !schemaAccepts(value)]);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, TIMEOUT_MS);

  it('webhook URL: REST takes every URL the schema accepts, and GraphQL refuses for its form exactly the others', async () => {
    const schema = bodySchema('/api/webhooks', 'post', 'url');
    expect(schema).toMatchObject({ format: 'uri', pattern: expect.any(String) });
    const schemaAccepts = accepts(schema);
    // Refusals for the address (private, unresolvable) are another rule; these are the form's.
    const forForm = (message: string | undefined) => message !== undefined && /^must be an absolute|characters$/.test(message);
    const registered: string[] = [];
    await fc.assert(
      fc.asyncProperty(nearUrl, async (value) => {
        const rest = await t.rest({ method: 'POST', url: '/api/webhooks', remoteAddress: address(), headers: bearer(agent.token), payload: { url: value } });
        if (rest.statusCode === 201) registered.push(rest.json<{ id: string }>().id);
        const wellFormed = schemaAccepts(value) && whatwgReads(value);
        if (wellFormed) expect([value, rest.statusCode, forForm(rest.json<{ errors?: { url?: string } }>().errors?.url)]).toEqual([value, 201, false]);
        if (value.trim() === value) {
          const answer = await graphql('mutation($url: String!) { registerWebhook(input: {url: $url}) { webhook { id } } }', { url: value }, agent.token);
          const id = (answer.data?.registerWebhook as { webhook: { id: string } } | undefined)?.webhook.id;
          if (id) registered.push(id);
          expect([value, forForm(refusedFields(answer).url)]).toEqual([value, !wellFormed]);
        }
        // Stay under the 20 webhooks an agent may have.
        for (const id of registered.splice(0)) await t.rest({ method: 'DELETE', url: `/api/webhooks/${id}`, headers: bearer(agent.token) });
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, TIMEOUT_MS);

  it('tool URLs: REST takes every url and api_endpoint the schema accepts, and GraphQL refuses for their form exactly the others', async () => {
    const urlAccepts = accepts(bodySchema('/api/tools', 'post', 'url'));
    const endpointAccepts = accepts(bodySchema('/api/tools', 'post', 'api_endpoint'));
    const forForm = (message: string | undefined) => message !== undefined && /^must be an absolute|at most 2048 characters$/.test(message);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(nearUrl, fc.boolean(), async (value, asEndpoint) => {
        // A unique tool URL each time when the endpoint is the value under test.
        const fields = asEndpoint ? { url: `https://fidelity-${++n}.example.com`, api_endpoint: value } : { url: value };
        const schemaAccepts = asEndpoint ? endpointAccepts : urlAccepts;
        const field = asEndpoint ? 'api_endpoint' : 'url';
        const rest = await t.rest({
          method: 'POST',
          url: '/api/tools',
          remoteAddress: address(),
          headers: bearer(user.token),
          payload: { name: 'Fidelity', description: 'Generated.', category_id: 1, ...fields },
        });
        const wellFormed = schemaAccepts(value) && whatwgReads(value);
        // 409: a URL submitted before (the same tool once normalised).
        if (wellFormed) expect([value, rest.statusCode, [201, 409].includes(rest.statusCode)]).toEqual([value, rest.statusCode, true]);
        if (value.trim() === value || asEndpoint) {
          const input = { name: 'Fidelity', description: 'Generated.', categoryId: 1, url: asEndpoint ? `https://fidelity-${++n}.example.com` : value, ...(asEndpoint ? { apiEndpoint: value } : {}) };
          const answer = await graphql('mutation($input: SubmitToolInput!) { submitTool(input: $input) { id } }', { input }, user.token);
          expect([value, forForm(refusedFields(answer)[field])]).toEqual([value, !wellFormed]);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, TIMEOUT_MS);

  it('page: REST and GraphQL take exactly the pages the schema accepts', async () => {
    const schema = parameterSchema('/api/tools', 'get', 'page');
    expect(schema).toMatchObject({ minimum: 1, maximum: expect.any(Number) });
    const schemaAccepts = accepts(schema);
    const page = fc.oneof(fc.integer({ min: -2, max: 12 }), fc.integer({ min: 9_990, max: 10_010 }), fc.integer({ min: 10_011, max: 2 ** 31 - 1 }));
    await fc.assert(
      fc.asyncProperty(page, async (value) => {
        const rest = await t.rest({ method: 'GET', url: `/api/tools?page=${value}`, remoteAddress: address() });
        expect([value, rest.statusCode]).toEqual([value, schemaAccepts(value) ? 200 : 400]);
        const answer = await graphql('query($page: Int!) { tools(page: $page) { page } }', { page: value });
        expect([value, 'page' in refusedFields(answer)]).toEqual([value, !schemaAccepts(value)]);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, TIMEOUT_MS);
});
