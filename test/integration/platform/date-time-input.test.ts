import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { callTool, connectMcp } from '../../factories/mcp.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

const REFUSED = 'must be an RFC 3339 date-time with a time-zone offset';

/** Date-times as clients write them, and whether RFC 3339 §5.6 (with its note on lower case) takes them. */
const CORPUS: [text: string, rfc3339: boolean][] = [
  ['2031-05-06T14:00:00Z', true],
  ['2031-05-06t14:00:00z', true],
  ['2031-05-06t14:00:00Z', true],
  ['2031-05-06T16:00:00+02:00', true],
  ['2031-05-06T14:00:00-00:00', true],
  ['2031-05-06T14:00:00.123456789Z', true],
  ['2031-05-06 14:00:00Z', false],
  ['2031-05-06T16:00:00+0200', false],
  ['2031-05-06T16:00:00+02', false],
  ['2031-05-06T14:00:00', false],
  ['2031-12-31T23:59:60Z', false],
  ['2031-05-06T24:00:00Z', false],
  ['2031-02-30T09:00:00Z', false],
];

describe('one date-time rule on REST, GraphQL and MCP', () => {
  let t: TestApp;
  let agent: AgentWithToken;
  let mcp: Client;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    agent = await bootstrapAgent(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    mcp = await connectMcp(t, bearer(agent.token));
  });
  afterAll(async () => {
    await mcp.close();
    await t.close();
  });

  it.each(CORPUS)('%s: accepted by all three surfaces or by none (RFC 3339: %p)', async (text, rfc3339) => {
    const rest = await t.rest({ method: 'GET', url: `/api/bookings?${new URLSearchParams({ from: text })}`, headers: bearer(agent.token) });
    const asVariable = await t.rest({
      method: 'POST',
      url: '/graphql',
      headers: bearer(agent.token),
      payload: { query: 'query ($from: DateTimeISO) { bookings(from: $from) { __typename } }', variables: { from: text } },
    });
    const asLiteral = await t.rest({ method: 'POST', url: '/graphql', headers: bearer(agent.token), payload: { query: `{ bookings(from: ${JSON.stringify(text)}) { __typename } }` } });
    const tool = await callTool(mcp, 'list_bookings', { from: text });

    const accepted = {
      rest: rest.statusCode === 200,
      graphqlVariable: asVariable.json<{ errors?: unknown }>().errors === undefined,
      graphqlLiteral: asLiteral.json<{ errors?: unknown }>().errors === undefined,
      mcp: !tool.isError,
    };
    expect(accepted).toEqual({ rest: rfc3339, graphqlVariable: rfc3339, graphqlLiteral: rfc3339, mcp: rfc3339 });
    if (!rfc3339) {
      // REST and MCP name the field with the same words.
      expect(rest.json()).toEqual({ errors: { from: REFUSED } });
      expect(tool.body).toEqual({ error: 'validation', message: `from ${REFUSED}`, errors: { from: REFUSED } });
    }
  });
});
