import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MINT, pair, startFakeScreener } from '../../factories/fake-screener.js';
import { startTestApp, type TestApp } from '../../harness.js';

describe('the token read budget, shared by REST and MCP', () => {
  const PER_MINUTE = 3;
  let t: TestApp;
  let screener: Awaited<ReturnType<typeof startFakeScreener>>;
  let client: Client;

  beforeAll(async () => {
    screener = await startFakeScreener({ [MINT]: [pair()] });
    t = await startTestApp({ jobs: false, env: { SCREENER_URL: screener.url, RATE_LIMIT_TOKENS_PER_MIN: String(PER_MINUTE) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    client = new Client({ name: 'budget-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`)));
  });
  afterAll(async () => {
    await client.close();
    await t.close();
    await screener.close();
  });

  const rest = (remoteAddress: string) => t.rest({ method: 'GET', url: `/v1/tokens/${MINT}/safety`, remoteAddress });
  const tool = async () => {
    const result = await client.callTool({ name: 'get_token_analytics', arguments: { mint: MINT } });
    const [content] = result.content as { text: string }[];
    return { isError: result.isError === true, body: JSON.parse(content!.text) as { error?: string } };
  };

  it(`serves ${PER_MINUTE} reads a minute to an address, over REST and MCP together, and refuses the next`, async () => {
    // The MCP client connects from 127.0.0.1: two tool calls and one REST read spend that address's budget.
    expect((await tool()).isError).toBe(false);
    expect((await rest('127.0.0.1')).statusCode).toBe(200);
    expect((await tool()).isError).toBe(false);
    const refusedTool = await tool();
    expect(refusedTool).toEqual({ isError: true, body: { error: 'rate_limited', message: expect.any(String) } });
    const refusedRest = await rest('127.0.0.1');
    expect(refusedRest.statusCode).toBe(429);
    expect(refusedRest.json()).toEqual({ error: 'rate_limited', message: expect.any(String) });
    expect(Number(refusedRest.headers['retry-after'])).toBeGreaterThan(0);
    // Another address has its own budget.
    expect((await rest('10.70.0.2')).statusCode).toBe(200);
  });
});
