/**
 * MCP (Model Context Protocol) at `/mcp`, Streamable HTTP: one more adapter over the same services as
 * REST and GraphQL. The tools live with their modules; this endpoint only serves them. Stateless:
 * every POST gets its own server and transport.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OriginPolicy } from '../http/origin-policy.js';
import { installJsonBodyParser } from '../http/validation.js';
import { mcpServerFactory, type McpTools } from './mcp-server.js';

export type { McpTools } from './mcp-server.js';

/** Where `/mcp` may be called from (config.ts: PUBLIC_URL, MCP_ALLOWED_ORIGINS, MCP_ALLOWED_HOSTS). */
export interface McpAccess {
  publicUrl: string;
  allowedOrigins: readonly string[];
  allowedHosts: readonly string[];
}

/** HTTP-level answers of the transport are JSON-RPC errors without an id, as the SDK's own are. */
const transportError = (reply: FastifyReply, status: number, message: string) => reply.code(status).send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

const REFUSALS = {
  origin: 'Origin not allowed: /mcp answers browser pages only of the origins in MCP_ALLOWED_ORIGINS',
  host: "Host not allowed: /mcp answers only to PUBLIC_URL's host name, the loopback names and MCP_ALLOWED_HOSTS",
} as const;

export function registerMcpEndpoint(app: FastifyInstance, offer: McpTools, access: McpAccess): void {
  const policy = new OriginPolicy(access);
  const createServer = mcpServerFactory(offer);
  // Before the body is read: a refused page costs no parsing.
  const guard = async (request: FastifyRequest, reply: FastifyReply) => {
    const refusal = policy.refusal(request.headers);
    if (refusal) return transportError(reply, 403, REFUSALS[refusal]);
  };

  app.register(async (mcp) => {
    // A U+0000 in an argument is that argument's validation error (tool-arguments.ts), not an HTTP 400.
    installJsonBodyParser(mcp, { refuseNul: false });

    mcp.post('/mcp', { schema: { hide: true }, onRequest: guard }, async (request, reply) => {
      const server = createServer({ actor: request.actor, address: request.ip });
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        // Closing a request's server after its client left may fail; it concerns nobody else.
        const closing = (what: string) => (error: unknown) => request.log.debug({ err: error }, `closing the MCP ${what} failed`);
        transport.close().catch(closing('transport'));
        server.close().catch(closing('server'));
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    });

    // Stateless: no server-initiated stream and no sessions to end.
    const notAllowed = async (_request: unknown, reply: FastifyReply) => transportError(reply.header('allow', 'POST'), 405, 'Method not allowed: use POST');
    mcp.get('/mcp', { schema: { hide: true }, onRequest: guard }, notAllowed);
    mcp.delete('/mcp', { schema: { hide: true }, onRequest: guard }, notAllowed);
  });
}
