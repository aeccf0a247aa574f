import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from '../harness.js';

/** `/mcp` of an app that listens (`await t.app.listen({ port: 0, host: '127.0.0.1' })`). */
export function mcpUrl(t: TestApp): URL {
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the app does not listen: call t.app.listen first');
  return new URL(`http://127.0.0.1:${address.port}/mcp`);
}

/** The official SDK client, connected (initialize) with these headers on every request; close it after. */
export async function connectMcp(t: TestApp, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(t), { requestInit: { headers } }));
  return client;
}

export interface ToolAnswer {
  isError: boolean;
  /** The text content, parsed. */
  body: unknown;
  structured: unknown;
}

/** A tools/call through the client: a protocol error throws; a tool result is returned whole. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  if (content.length !== 1 || content[0]!.type !== 'text') throw new Error(`expected one text content, got ${JSON.stringify(result).slice(0, 200)}`);
  let body: unknown;
  try {
    body = JSON.parse(content[0]!.text);
  } catch {
    body = content[0]!.text;
  }
  return { isError: result.isError === true, body, structured: result.structuredContent };
}
