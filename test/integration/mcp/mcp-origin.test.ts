import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { callTool, connectMcp, mcpUrl } from '../../factories/mcp.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/** A raw HTTP request to the listening app, with a Host header of our choosing (fetch would not send one). */
function send(t: TestApp, options: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<{ status: number; body: unknown }> {
  const url = mcpUrl(t);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...options.headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode!, body: text ? (JSON.parse(text) as unknown) : undefined });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const createBooking = (startsAt: string, endsAt: string) => ({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_booking', arguments: { startsAt, endsAt } } });
const refused = (header: 'Origin' | 'Host') => ({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining(header) }, id: null });

describe('/mcp refuses other sites’ pages (Origin) and rebound names (Host)', () => {
  describe('by default: no browser origin, the loopback names and PUBLIC_URL’s', () => {
    let t: TestApp;
    let agent: AgentWithToken;
    let port: string;
    const bookings = async () => Number((await t.query<{ count: string }>('select count(*) from bookings'))[0]!.count);

    beforeAll(async () => {
      t = await startTestApp({ jobs: false, env: { PUBLIC_URL: 'https://gateway.example.com' } });
      agent = await bootstrapAgent(t);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = mcpUrl(t).port;
    });
    afterAll(() => t.close());

    it('serves an agent, which sends no Origin, through the SDK client', async () => {
      const client = await connectMcp(t, bearer(agent.token));
      expect((await callTool(client, 'list_bookings', {})).isError).toBe(false);
      await client.close();
    });

    it('refuses initialize from a page of another origin with 403, through the SDK client and raw', async () => {
      await expect(connectMcp(t, { origin: 'http://evil.example' })).rejects.toMatchObject({ code: 403 });
      expect(await send(t, { headers: { origin: 'http://evil.example' }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Origin') });
    });

    it('refuses a tools/call carrying a valid token from another origin, and books nothing', async () => {
      const before = await bookings();
      const answer = await send(t, { headers: { origin: 'http://evil.example', ...bearer(agent.token) }, body: createBooking('2031-04-01T09:00:00Z', '2031-04-01T10:00:00Z') });
      expect(answer).toEqual({ status: 403, body: refused('Origin') });
      expect(await bookings()).toBe(before);
      // The same call without the Origin books: the refusal was the Origin's.
      const served = await send(t, { headers: bearer(agent.token), body: createBooking('2031-04-01T09:00:00Z', '2031-04-01T10:00:00Z') });
      expect(served).toMatchObject({ status: 200, body: { result: { structuredContent: { status: 'confirmed' } } } });
      expect(await bookings()).toBe(before + 1);
    });

    it.each(['https://gateway.example.com', `http://localhost:${3000}`, 'null', ''])('refuses Origin %p too: the server’s own origin is allowed only when listed', async (origin) => {
      expect(await send(t, { headers: { origin }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Origin') });
    });

    it('refuses a rebound host name, with or without its Origin, and on every method', async () => {
      expect(await send(t, { headers: { host: `evil.example:${port}` }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Host') });
      expect(await send(t, { headers: { host: `evil.example:${port}`, origin: `http://evil.example:${port}` }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Origin') });
      expect(await send(t, { headers: { host: `localhost.evil.example:${port}` }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Host') });
      expect(await send(t, { headers: { host: `evil.example@localhost:${port}` }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Host') });
      expect(await send(t, { method: 'GET', headers: { origin: 'http://evil.example' } })).toEqual({ status: 403, body: refused('Origin') });
      // X-Forwarded-Host is a header a page may set itself: never read.
      expect(await send(t, { headers: { host: `evil.example:${port}`, 'x-forwarded-host': 'localhost' }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Host') });
    });

    it.each(['localhost', '127.0.0.1', '[::1]', 'LOCALHOST', 'gateway.example.com', 'gateway.example.com:443'])('answers Host %p (any port)', async (host) => {
      const answer = await send(t, { headers: { host: host.includes(':') ? host : `${host}:${port}` }, body: INITIALIZE });
      expect(answer).toMatchObject({ status: 200, body: { result: { serverInfo: { name: 'agent-gateway' } } } });
    });
  });

  describe('with MCP_ALLOWED_ORIGINS and MCP_ALLOWED_HOSTS', () => {
    let t: TestApp;
    let agent: AgentWithToken;

    beforeAll(async () => {
      t = await startTestApp({
        jobs: false,
        env: { PUBLIC_URL: 'https://gateway.example.com', MCP_ALLOWED_ORIGINS: 'https://gateway.example.com,http://localhost:5173', MCP_ALLOWED_HOSTS: 'gateway-upstream' },
      });
      agent = await bootstrapAgent(t);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(() => t.close());

    it('serves a page of a listed origin through the SDK client', async () => {
      const client = await connectMcp(t, { origin: 'http://localhost:5173', ...bearer(agent.token) });
      expect(await callTool(client, 'list_bookings', {})).toMatchObject({ isError: false, body: { items: [] } });
      await client.close();
    });

    it('serves the server’s own pages once their origin is listed (same origin, PUBLIC_URL’s host)', async () => {
      const answer = await send(t, { headers: { origin: 'https://gateway.example.com', host: 'gateway.example.com' }, body: INITIALIZE });
      expect(answer).toMatchObject({ status: 200, body: { result: { serverInfo: { name: 'agent-gateway' } } } });
    });

    it('still refuses an origin that is not listed, and answers a listed upstream host name', async () => {
      expect(await send(t, { headers: { origin: 'http://localhost:5174' }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Origin') });
      expect(await send(t, { headers: { host: 'gateway-upstream:3000' }, body: INITIALIZE })).toMatchObject({ status: 200 });
      expect(await send(t, { headers: { host: 'gateway-elsewhere:3000' }, body: INITIALIZE })).toEqual({ status: 403, body: refused('Host') });
    });
  });
});
