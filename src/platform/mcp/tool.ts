import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../auth/actor.js';

/** Who calls a tool: the agent of the request's token (resolved on first use) and the client's address. */
export interface ToolCaller {
  actor: () => Promise<Actor>;
  address: string;
}

/**
 * The JSON Schema of a tool's arguments, published in `tools/list` and checked as it stands: an object
 * closed to arguments it does not name. Only keywords that mean the same in draft-07 (what ajv checks)
 * and 2020-12 (MCP's default dialect).
 */
export interface ToolInputSchema {
  type: 'object';
  additionalProperties: false;
  properties: Readonly<Record<string, object>>;
  required?: readonly string[];
}

/**
 * One MCP tool: its listing, and what it does with arguments its schema accepted (defaults filled in).
 * Tools live with the concept they adapt and call its service, as REST routes and resolvers do.
 */
export interface ToolDefinition<Args> {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  annotations?: ToolAnnotations;
  // A method (its parameter is checked both ways), so that a tool of any arguments is a ToolDefinition<unknown> in a list.
  run(args: Args, caller: ToolCaller): Promise<unknown>;
}

/** Declares a tool, typing its arguments. */
export const tool = <Args>(definition: ToolDefinition<Args>): ToolDefinition<Args> => definition;

/** Argument schemas every surface writes alike. */
export const TOOL_ARGUMENTS = {
  dateTime: { type: 'string', format: 'date-time', description: 'RFC 3339 date-time with an offset: 2031-05-06T14:00:00Z, 2031-05-06T16:00:00+02:00' },
} as const;
