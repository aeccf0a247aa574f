/**
 * MCP (Model Context Protocol) at `/mcp`, Streamable HTTP: one more adapter over the same services as
 * REST and GraphQL. Stateless: every POST gets its own server and transport.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { installJsonBodyParser } from '../../platform/http/validation.js';
import { createMcpServer, type McpDeps } from './mcp.server.js';

export type { McpDeps } from './mcp.server.js';

export function registerMcpEndpoint(app: FastifyInstance, deps: McpDeps): void {
  app.register(async (mcp) => {
    // A U+0000 in an argument is that argument's validation error (tool-arguments.ts), not an HTTP 400.
    installJsonBodyParser(mcp, { refuseNul: false });

    mcp.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
      const server = createMcpServer(deps, request.actor, request.ip);
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
    const notAllowed = async (_request: unknown, reply: FastifyReply) =>
      reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: use POST' }, id: null });
    mcp.get('/mcp', { schema: { hide: true } }, notAllowed);
    mcp.delete('/mcp', { schema: { hide: true } }, notAllowed);
  });
}
