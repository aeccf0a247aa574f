import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { postBooking } from '../../factories/bookings.js';
import { startDnsServer, type TestDnsServer } from '../../factories/dns-server.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const DNS_TIMEOUT_MS = 600;

describe('webhook host names are looked up within DNS_TIMEOUT_MS', () => {
  let silent: TestDnsServer;
  let answering: TestDnsServer;
  let t: TestApp;
  let answered: TestApp;
  let root: AgentWithToken;

  beforeAll(async () => {
    silent = await startDnsServer();
    answering = await startDnsServer({ 'public.hooks.test': '93.184.216.34', 'private.hooks.test': '10.0.0.7' });
    const env = { WEBHOOK_ALLOW_PRIVATE: 'false', DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS) };
    t = await startTestApp({ jobs: false, env: { ...env, DNS_SERVERS: silent.address } });
    answered = await startTestApp({ jobs: false, databaseUrl: t.databaseUrl, env: { ...env, DNS_SERVERS: answering.address } });
    root = await bootstrapAgent(t);
  });
  afterAll(async () => {
    await answered.app.close();
    await answered.orm.close(true);
    await t.close();
    await silent.close();
    await answering.close();
  });

  const register = (app: TestApp, agent: AgentWithToken, url: string) =>
    app.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url } });

  it('answers 400 errors.url within the bound when the name server never answers, serving other requests meanwhile', async () => {
    const agent = await createAgent(t, root);
    const started = performance.now();
    // More lookups than libuv's thread pool has threads, and more than may run at once.
    const registrations = Array.from({ length: 24 }, (_, i) =>
      register(t, agent, `https://hook-${i}.silent.test/x`).then((response) => ({ response, ms: performance.now() - started })),
    );

    await new Promise((resolve) => setTimeout(resolve, 50));
    const meanwhile = performance.now();
    const list = await t.rest({ method: 'GET', url: '/api/webhooks', headers: bearer(agent.token) });
    const booking = await postBooking(t, agent, { startsAt: '2030-01-01T10:00:00Z', endsAt: '2030-01-01T11:00:00Z' });
    await readFile(new URL(import.meta.url)); // the thread pool is free
    expect(list.statusCode).toBe(200);
    expect(booking.statusCode).toBe(201);
    expect(performance.now() - meanwhile).toBeLessThan(DNS_TIMEOUT_MS / 2);

    for (const { response, ms } of await Promise.all(registrations)) {
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: { url: expect.stringMatching(new RegExp(`^host hook-\\d+\\.silent\\.test did not resolve within ${DNS_TIMEOUT_MS} ms$`)) } });
      expect(ms).toBeGreaterThanOrEqual(DNS_TIMEOUT_MS - 20);
      expect(ms).toBeLessThan(DNS_TIMEOUT_MS + 1_000);
    }
    expect(silent.queries.some((name) => name.endsWith('.silent.test'))).toBe(true);
    expect(await t.query('select id from webhooks where agent_id = $1', [agent.id])).toEqual([]);
  });

  it('registers a host the name server resolves to a public address, and refuses one it resolves to a private address', async () => {
    const agent = await createAgent(t, root);
    const accepted = await register(answered, agent, 'https://public.hooks.test/x');
    expect(accepted.statusCode).toBe(201);
    const refused = await register(answered, agent, 'https://private.hooks.test/x');
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ errors: { url: 'resolves to a loopback, private, link-local or other non-public address (10.0.0.7)' } });
    expect(await t.query('select url from webhooks where agent_id = $1', [agent.id])).toEqual([{ url: 'https://public.hooks.test/x' }]);
  });

  it('never asks the name server about localhost or IP literals', async () => {
    const agent = await createAgent(t, root);
    const before = silent.queries.length;
    for (const url of ['http://localhost/x', 'http://127.0.0.1:8080/x', 'http://[::1]/x']) {
      const started = performance.now();
      const response = await register(t, agent, url);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors.url).toMatch(/loopback, private, link-local or other non-public address/);
      expect(performance.now() - started).toBeLessThan(DNS_TIMEOUT_MS / 2);
    }
    expect(silent.queries.length).toBe(before);
  });
});
