import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { tokenAfterWrite, writingNow } from '../db/read-your-writes.js';
import { INTERNAL_ERROR, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ToolCaller, ToolDefinition } from './tool.js';
import { argumentValidators, checkedArguments } from './tool-arguments.js';

/** What the MCP server offers: the tools the modules adapt, in the order `tools/list` names them. */
export interface McpTools {
  tools: readonly ToolDefinition<unknown>[];
  logger: Logger;
  version: string;
}

/**
 * Every tool error, whatever refused the call (its arguments, a rule, the database), is one result:
 * `isError` with `{error, message[, errors]}` as structured content and as text, the REST code and
 * field map; anything unexpected is the bare internal error.
 */
async function answer(work: () => Promise<unknown>, logger: Logger): Promise<CallToolResult> {
  try {
    const data = await work();
    return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data as Record<string, unknown> };
  } catch (error) {
    const appError = toAppError(error);
    if (!appError) logger.error({ err: error }, 'unhandled MCP tool error');
    const body = appError
      ? { error: appError.code, message: appError.message, ...(appError.fields ? { errors: appError.fields } : {}) }
      : INTERNAL_ERROR.body;
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  }
}

/**
 * One MCP server per request (stateless Streamable HTTP). The SDK's low-level `Server`, not `McpServer`:
 * `McpServer` checks arguments against zod itself and answers a refusal as text of its own
 * (`MCP error -32602: Input validation error: …`) before any code of ours runs. Here `tools/list`
 * publishes each tool's JSON Schema and `tools/call` checks the arguments against that very schema, with
 * REST's validator, so an argument error is the same tool error as any other (SEP-1303, spec 2025-11-25).
 */
export function mcpServerFactory(offer: McpTools): (caller: ToolCaller) => Server {
  const byName = new Map(offer.tools.map((tool) => [tool.name, tool]));
  if (byName.size !== offer.tools.length) throw new Error('two MCP tools share a name');
  const validators = argumentValidators(offer.tools);
  const listing = offer.tools.map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema, ...(annotations ? { annotations } : {}) }));
  return (caller) => {
    const server = new Server({ name: 'agent-gateway', version: offer.version }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const tool = byName.get(request.params.name);
      // An unknown tool is a protocol error (the specification's own example), not a tool result.
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 100)}`);
      const validator = validators.get(tool.name)!;
      if (tool.annotations?.readOnlyHint) return answer(() => tool.run(checkedArguments(validator, request.params.arguments ?? {}), caller), offer.logger);
      // A tool that writes: reads after it stay on the primary, and its token goes out as a header (read-your-writes.ts).
      writingNow();
      return answer(async () => {
        const result = await tool.run(checkedArguments(validator, request.params.arguments ?? {}), caller);
        await tokenAfterWrite();
        return result;
      }, offer.logger);
    });
    return server;
  };
}
