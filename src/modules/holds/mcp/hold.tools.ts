import { tool, type ToolDefinition } from '../../../platform/mcp/tool.js';
import { holdCreateProperties } from '../hold.schema.js';
import type { HoldService } from '../holds.service.js';

const holdId = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** The MCP tools of holds, answering what REST answers. */
export function holdTools(holds: HoldService): ToolDefinition<unknown>[] {
  return [
    tool<{ agentIds?: string[]; startsAt: string; endsAt: string; ttlSeconds?: number }>({
      name: 'hold_slot',
      description:
        'Holds [startsAt, endsAt) on one or several calendars (the caller’s own and its children’s) for a few minutes, all or none, under each ' +
        'calendar’s rules; the held time blocks like a booking until the hold is confirmed (confirm_hold), released or expires.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['startsAt', 'endsAt'], properties: holdCreateProperties },
      run: async ({ agentIds, startsAt, endsAt, ttlSeconds }, { actor }) =>
        holds.create(await actor(), { agentIds, startsAt: new Date(startsAt), endsAt: new Date(endsAt), ttlSeconds }),
    }),
    tool<{ holdId: string }>({
      name: 'confirm_hold',
      description: 'Confirms a live hold: every held booking becomes a confirmed booking with the same id, in one transaction; idempotent. hold_expired or hold_released otherwise.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['holdId'], properties: { holdId } },
      annotations: { idempotentHint: true },
      run: async ({ holdId: id }, { actor }) => holds.confirm(await actor(), id),
    }),
    tool<{ holdId: string }>({
      name: 'release_hold',
      description: 'Releases a hold: its time is free again at once (idempotent).',
      inputSchema: { type: 'object', additionalProperties: false, required: ['holdId'], properties: { holdId } },
      annotations: { idempotentHint: true, destructiveHint: true },
      run: async ({ holdId: id }, { actor }) => holds.release(await actor(), id),
    }),
    tool<Record<string, never>>({
      name: 'list_holds',
      description: "The calling agent's live holds, newest first.",
      inputSchema: { type: 'object', additionalProperties: false, properties: {} },
      annotations: { readOnlyHint: true },
      run: async (_args, { actor }) => ({ items: await holds.listLive(await actor()) }),
    }),
  ];
}
