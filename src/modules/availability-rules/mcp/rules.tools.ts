import { tool, type ToolDefinition } from '../../../platform/mcp/tool.js';
import type { AvailabilityRulesService } from '../rules.service.js';
import { rulesInputProperties } from '../rules.schema.js';
import type { AvailabilityRulesInput } from '../rules.view.js';

const agentId = { type: 'string', minLength: 1, maxLength: 128, description: 'the agent (the caller when absent, or one of its children)' } as const;

/** The MCP tools of availability rules, answering what REST answers. */
export function rulesTools(rules: AvailabilityRulesService): ToolDefinition<unknown>[] {
  return [
    tool<{ agentId?: string }>({
      name: 'get_availability_rules',
      description: "An agent's availability rules (working hours, overrides, buffers, notice, advance, limits); `rules` is null when it has none.",
      inputSchema: { type: 'object', additionalProperties: false, properties: { agentId } },
      annotations: { readOnlyHint: true },
      run: async (args, { actor }) => ({ rules: await rules.get(await actor(), args.agentId) }),
    }),
    tool<AvailabilityRulesInput & { agentId?: string }>({
      name: 'set_availability_rules',
      description:
        "Replaces an agent's availability rules whole (the caller's, or a child's with agentId). Hours are HH:MM on the zone's wall clock; " +
        'they bind what other agents take from the calendar, and the agent itself with enforceOnOwnBookings.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['timeZone'], properties: { agentId, ...rulesInputProperties } },
      annotations: { idempotentHint: true },
      run: async ({ agentId: subject, ...input }, { actor }) => rules.set(await actor(), input, subject),
    }),
    tool<{ agentId?: string }>({
      name: 'clear_availability_rules',
      description: "Removes an agent's availability rules: it then behaves as an agent without rules.",
      inputSchema: { type: 'object', additionalProperties: false, properties: { agentId } },
      annotations: { idempotentHint: true, destructiveHint: true },
      run: async (args, { actor }) => {
        await rules.clear(await actor(), args.agentId);
        return { rules: null };
      },
    }),
  ];
}
