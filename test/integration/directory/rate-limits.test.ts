import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn } from '../../factories/users.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

describe('rate limits', () => {
  let a: TestApp;
  let b: TestApp;
  const mailbox = new Mailbox();
  const env = { RATE_LIMIT_ANON_PER_MIN: '4', RATE_LIMIT_AUTH_PER_MIN: '8' };

  beforeAll(async () => {
    a = await startTestApp({ env, mailer: mailbox, jobs: false });
    // A second process on the same database: the budget is shared through PostgreSQL.
    b = await startTestApp({ env, mailer: mailbox, jobs: false, databaseUrl: a.databaseUrl });
  });
  afterAll(async () => {
    await b.app.close();
    await b.orm.close(true);
    await a.close();
  });

  const read = (t: TestApp, remoteAddress: string, headers: Record<string, string> = {}) =>
    t.rest({ method: 'GET', url: '/api/categories', remoteAddress, headers });

  it('answers 429 with Retry-After and RateLimit-* headers once an address has spent its budget across both processes', async () => {
    const statuses = [];
    for (const t of [a, b, a, b]) statuses.push((await read(t, '10.20.0.1')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const limited = await read(b, '10.20.0.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ success: false, message: expect.stringMatching(/rate limit/) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-limit']).toBe('4');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    // Another address has its own budget.
    expect((await read(a, '10.20.0.2')).statusCode).toBe(200);
  });

  it('gives signed-in users their own, larger budget, and sign-in does not spend the directory budget', async () => {
    const user = await signIn(a, mailbox);
    const remaining = [];
    for (let i = 0; i < 8; i++) {
      const response = await read(i % 2 ? a : b, '10.20.0.3', bearer(user.token));
      expect(response.statusCode).toBe(200);
      remaining.push(Number(response.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    expect((await read(a, '10.20.0.3', bearer(user.token))).statusCode).toBe(429);
    // The same address without a token still has its anonymous budget.
    expect((await read(a, '10.20.0.3')).statusCode).toBe(200);
  });

  it('applies the sign-in limits to the GraphQL mutations too, alias by alias', async () => {
    const aliases = Array.from({ length: 12 }, (_, i) => `m${i}: requestMagicLink(email: "alias-${i}@example.com")`).join('\n');
    const response = await a.rest({ method: 'POST', url: '/graphql', payload: { query: `mutation { ${aliases} }` }, remoteAddress: '10.40.0.1' });
    const body = response.json();
    // Mutation fields run in order: the first ten send their link, the eleventh is refused (and, the
    // field being non-null, ends the operation).
    expect(body.errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toEqual(['rate_limited']);
    expect(mailbox.messages.filter((message) => message.to.startsWith('alias-'))).toHaveLength(10);
  });

  it('limits sign-in to 10 requests a minute per address', async () => {
    const statuses = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await a.rest({ method: 'POST', url: '/api/auth/magic-link', payload: { email: `flood-${i}@example.com` }, remoteAddress: '10.30.0.1' })).statusCode);
    }
    expect(statuses.slice(0, 10).every((status) => status === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    const perAddress = [];
    for (let i = 0; i < 11; i++) {
      perAddress.push((await b.rest({ method: 'POST', url: '/api/auth/magic-link', payload: { email: 'same@example.com' }, remoteAddress: `10.31.0.${i + 1}` })).statusCode);
    }
    expect(perAddress[10]).toBe(429);
    expect((await read(a, '10.30.0.1')).statusCode).toBe(200);
  });

  const spend = async (t: TestApp, remoteAddress: string, times: number, headers: Record<string, string> = {}) => {
    const statuses = [];
    for (let i = 0; i < times; i++) statuses.push((await read(t, remoteAddress, headers)).statusCode);
    return statuses;
  };

  it('counts an IPv6 client by its /64, and an IPv4 address written as IPv6 as that IPv4 address', async () => {
    expect([...(await spend(a, '2001:db8:5:6::1', 2)), ...(await spend(a, '2001:db8:5:6:ffff:ffff:ffff:fffe', 2))]).toEqual([200, 200, 200, 200]);
    expect((await read(a, '2001:db8:5:6:abcd::9')).statusCode).toBe(429);
    expect((await read(a, '2001:db8:5:7::1')).statusCode).toBe(200);
    expect(await spend(a, '10.20.0.50', 4)).toEqual([200, 200, 200, 200]);
    expect((await read(a, '::ffff:10.20.0.50')).statusCode).toBe(429);
  });

  it('believes X-Forwarded-For only from the proxies TRUST_PROXY names', async () => {
    // Without TRUST_PROXY a forwarded address is the client's to invent: the peer's budget is spent.
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await read(a, '10.20.0.60', { 'x-forwarded-for': `192.0.2.${i + 1}` })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);

    const behindProxy = await startTestApp({ env: { ...env, TRUST_PROXY: '10.99.0.0/16' }, mailer: mailbox, jobs: false, databaseUrl: a.databaseUrl });
    try {
      const viaProxy = (client: string, peer = '10.99.0.1') => behindProxy.rest({ method: 'GET', url: '/api/categories', remoteAddress: peer, headers: { 'x-forwarded-for': client } });
      // Each forwarded client has its own budget, though all arrive from the proxy's address.
      for (let i = 0; i < 4; i++) expect((await viaProxy('198.51.100.1')).statusCode).toBe(200);
      expect((await viaProxy('198.51.100.1')).statusCode).toBe(429);
      expect((await viaProxy('198.51.100.2')).statusCode).toBe(200);
      // A peer outside the trusted range is the client, whatever it forwards.
      for (let i = 0; i < 4; i++) expect((await viaProxy(`203.0.113.${i + 1}`, '10.20.0.61')).statusCode).toBe(200);
      expect((await viaProxy('203.0.113.99', '10.20.0.61')).statusCode).toBe(429);
    } finally {
      await behindProxy.app.close();
      await behindProxy.orm.close(true);
    }
  });

  it('spends the same directory budget through GraphQL, one unit per directory field, alias by alias', async () => {
    const graphql = (query: string, remoteAddress: string, headers: Record<string, string> = {}) =>
      a.rest({ method: 'POST', url: '/graphql', payload: { query }, remoteAddress, headers });
    // Two fields (aliases of one) spend two units of the address's budget of 4, as two REST reads would.
    const first = await graphql('{ one: categories { id } two: categories { id } }', '10.50.0.1');
    expect(first.json().errors).toBeUndefined();
    expect((await read(b, '10.50.0.1')).statusCode).toBe(200);
    expect((await graphql('{ stats { totalTools } }', '10.50.0.1')).json().errors).toBeUndefined();
    // The budget is spent whichever way: REST is refused, and so is every directory field of GraphQL.
    expect((await read(a, '10.50.0.1')).statusCode).toBe(429);
    for (const query of ['{ tools { page } }', '{ tool(id: 1) { id } }', '{ leaderboard { humans { id } } }', '{ categories { id } }']) {
      const refused = (await graphql(query, '10.50.0.1')).json();
      expect(refused.errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toEqual(['rate_limited']);
    }
    // A signed-in user's GraphQL reads spend their own budget, not the address's.
    const user = await signIn(a, mailbox);
    expect((await graphql('{ categories { id } }', '10.50.0.1', bearer(user.token))).json().errors).toBeUndefined();
  });
});
