import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GRAPHQL_LIMITS } from '../../../src/platform/graphql/limits.js';
import { bootstrapAgent } from '../../factories/agents.js';
import { startTestApp, type TestApp, withoutCost } from '../../harness.js';

describe('platform HTTP surface', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers liveness and readiness', async () => {
    const live = await t.rest({ method: 'GET', url: '/healthz' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    const ready = await t.rest({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', database_latency_ms: expect.any(Number) });
  });

  it('describes every REST route in OpenAPI 3.1 from the route schemas', async () => {
    const response = await t.rest({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
    const createAgent = document.paths['/api/agents'].post;
    const body = createAgent.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.name).toMatchObject({ minLength: 1, maxLength: 120 });
    expect(Object.keys(createAgent.responses).sort()).toEqual(['201', '400', '401', '409', '429', '500']);
    expect(document.paths['/graphql']).toBeUndefined();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/api/bookings',
        '/api/bookings/{id}/occurrences',
        '/api/proposals/{id}/accept',
        '/api/webhooks',
        '/api/tools',
        '/api/tools/{id}/vote',
        '/api/categories',
        '/api/leaderboard',
        '/api/stats',
        '/api/auth/magic-link',
        '/api/auth/verify',
      ]),
    );
  });

  it('answers unknown routes with a JSON 404', async () => {
    const response = await t.rest({ method: 'GET', url: '/api/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'not_found', message: expect.stringContaining('/api/nothing-here') });
  });

  it('sends nosniff, no-referrer and frame and transport headers on API answers, errors and pages, and keeps each page’s own CSP', async () => {
    const answers = {
      api: await t.rest({ method: 'GET', url: '/api/tools' }),
      error: await t.rest({ method: 'GET', url: '/api/nothing-here' }),
      graphql: await t.rest({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } }),
      page: await t.rest({ method: 'GET', url: '/browse' }),
      console: await t.rest({ method: 'GET', url: '/console' }),
    };
    for (const [name, response] of Object.entries(answers)) {
      expect([name, response.headers['x-content-type-options'], response.headers['referrer-policy'], response.headers['x-frame-options']]).toEqual([
        name,
        'nosniff',
        'no-referrer',
        'SAMEORIGIN',
      ]);
      expect(response.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    }
    expect(answers.page.headers['content-security-policy']).toContain("default-src 'self'");
    // The console allows no inline style at all; its WebSocket is the page's own origin.
    expect(answers.console.headers['content-security-policy']).toContain("style-src 'self';");
    expect(answers.console.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(answers.api.headers['content-security-policy']).toBeUndefined();
  });

  it('echoes a well-formed X-Request-Id and invents one otherwise', async () => {
    const given = await t.rest({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers['x-request-id']).toBe('trace-123');
    const invented = await t.rest({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(invented.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves GraphQL queries over GET without a preflight header, and mutations only over a JSON POST', async () => {
    const query = encodeURIComponent('{ __typename }');
    const get = await t.rest({ method: 'GET', url: `/graphql?query=${query}` });
    expect(get.statusCode).toBe(200);
    expect(withoutCost(get.json())).toEqual({ data: { __typename: 'Query' } });
    const mutation = encodeURIComponent('mutation { createAgent(input: { name: "x", bootstrap: true }) { publicToken } }');
    const getMutation = await t.rest({ method: 'GET', url: `/graphql?query=${mutation}` });
    expect(getMutation.statusCode).toBe(405);
    expect(getMutation.headers.allow).toBe('POST');
    // No CORS on /graphql: a cross-site page cannot send a credential header or a JSON body.
    const preflight = await t.rest({
      method: 'OPTIONS',
      url: '/graphql',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  // What a cross-site page can send without a preflight: none of it reaches execution.
  it.each([
    ['text/plain', JSON.stringify({ query: 'mutation { createAgent(input: { name: "x", bootstrap: true }) { publicToken } }' })],
    ['application/x-www-form-urlencoded', 'query=mutation%20%7B%20__typename%20%7D'],
    ['multipart/form-data; boundary=x', '--x\r\ncontent-disposition: form-data; name="query"\r\n\r\nmutation { __typename }\r\n--x--\r\n'],
  ])('refuses a %s POST to /graphql before running it', async (contentType, payload) => {
    const response = await t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': contentType }, payload });
    expect([400, 415]).toContain(response.statusCode);
    expect(response.body).not.toContain('"data"');
    expect(await t.query('select 1 from agents')).toEqual([]);
  });

  it('answers GraphQL request errors 200 to a client that accepts only application/json, 400 otherwise', async () => {
    const post = (accept: string | undefined) =>
      t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) }, payload: { query: '{ me {' } });
    for (const [accept, status] of [
      ['application/json', 200],
      ['application/json; charset=utf-8', 200],
      ['application/graphql-response+json', 400],
      ['application/graphql-response+json, application/json;q=0.9', 400],
      [undefined, 400],
    ] as const) {
      const response = await post(accept);
      expect({ accept, status: response.statusCode }).toEqual({ accept, status });
      expect(response.json().errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    }
  });

  it('refuses a body with a NUL character (no PostgreSQL text holds one) as a validation error on the body, and takes an escaped backslash before u0000', async () => {
    const before = (await t.query<{ n: number }>('select count(*)::int as n from agents'))[0]!.n;
    const nul = await t.rest({ method: 'POST', url: '/api/agents', headers: { 'content-type': 'application/json' }, payload: '{"name":"a\\u0000b","bootstrap":true}' });
    expect(nul.statusCode).toBe(400);
    expect(nul.json()).toEqual({ errors: { body: 'must not contain the character U+0000' } });
    const viaGraphQL = await t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query":"{ __typename }","variables":{"x":"\\u0000"}}' });
    expect(viaGraphQL.json().errors[0].extensions).toEqual({ code: 'validation', errors: { body: 'must not contain the character U+0000' } });
    expect((await t.query<{ n: number }>('select count(*)::int as n from agents'))[0]!.n).toBe(before);
    // A backslash followed by the text u0000 is an ordinary string.
    const text = await t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query":"{ __typename }","variables":{"x":"\\\\u0000"}}' });
    expect(withoutCost(text.json())).toEqual({ data: { __typename: 'Query' } });
  });

  it('takes a body of 1 MiB and refuses one byte more as a validation error on the body', async () => {
    const body = (bytes: number) => {
      const base = JSON.stringify({ query: '{ __typename }', variables: { pad: '' } });
      return JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(bytes - base.length) } });
    };
    const post = (payload: string) => t.rest({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload });
    const fits = await post(body(1024 * 1024));
    expect(fits.statusCode).toBe(200);
    expect(withoutCost(fits.json())).toEqual({ data: { __typename: 'Query' } });
    const tooLarge = await post(body(1024 * 1024 + 1));
    expect(tooLarge.statusCode).toBe(400);
    // Refused before Apollo sees it, yet in the shape GraphQL clients read.
    expect(tooLarge.json()).toEqual({ errors: [{ message: 'body is too large', extensions: { code: 'validation', errors: { body: 'is too large' } } }] });
  });

  it('refuses operations that are too deep or carry too many aliases, before running them', async () => {
    const deep = `{ me { ${'parent { '.repeat(10)}id${' }'.repeat(10)} } }`;
    const tooDeep = await t.rest({ method: 'POST', url: '/graphql', payload: { query: deep } });
    expect(tooDeep.statusCode).toBe(400);
    expect(tooDeep.json().errors[0]).toMatchObject({ message: expect.stringMatching(/depth/i), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: stats { totalTools }`).join(' ');
    const tooMany = await t.rest({ method: 'POST', url: '/graphql', payload: { query: `{ ${aliases} }` } });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors[0].message).toMatch(/alias/i);
  });

  it(`runs a document with ${GRAPHQL_LIMITS.maxDirectives} directives and refuses one with more, before running it`, async () => {
    const withDirectives = (count: number) => `{ ${Array.from({ length: count }, () => '__typename @include(if: true)').join(' ')} }`;
    const most = await t.rest({ method: 'POST', url: '/graphql', payload: { query: withDirectives(GRAPHQL_LIMITS.maxDirectives) } });
    expect(most.statusCode).toBe(200);
    expect(most.json().data).toEqual({ __typename: 'Query' });
    const tooMany = await t.rest({ method: 'POST', url: '/graphql', payload: { query: withDirectives(GRAPHQL_LIMITS.maxDirectives + 1) } });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors[0]).toMatchObject({ message: expect.stringMatching(/directives/i), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('answers GraphQL syntax errors with the parser message and a client code', async () => {
    const response = await t.rest({ method: 'POST', url: '/graphql', payload: { query: '{ me {' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  });
});

describe('unexpected failures', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answer a bare 500 over REST and INTERNAL_SERVER_ERROR over GraphQL, leaking nothing', async () => {
    const root = await bootstrapAgent(t);
    // Break the database under the running app: the next agent lookup fails in SQL.
    await t.query('alter table agents rename to agents_gone');
    const rest = await t.rest({ method: 'POST', url: '/api/agents', headers: { authorization: `Bearer ${root.token}` }, payload: { name: 'x' } });
    expect(rest.statusCode).toBe(500);
    expect(rest.json()).toEqual({ error: 'Internal Server Error' });

    const gql = await t.rest({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${root.token}` }, payload: { query: '{ me { id } }' } });
    const body = gql.json();
    expect(body.errors).toEqual([{ message: 'Internal Server Error', locations: expect.any(Array), path: ['me'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
    expect(gql.body).not.toMatch(/agents|relation|stack/i);

    const ready = await t.rest({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    await t.query('alter table agents_gone rename to agents');
  });
});
