import { SCHEDULING_LIMITS } from '../../../platform/api-limits.js';
import { tool, TOOL_ARGUMENTS, type ToolDefinition } from '../../../platform/mcp/tool.js';
import { AVAILABILITY_LIMITS as L, decodeSlotCursor, type AvailabilityService } from '../availability.service.js';
import { presentAvailabilityPage, presentSlotCheck } from '../availability.view.js';

/** Argument schemas of the availability question, shared with `propose_first_available` (proposals). */
export const AVAILABILITY_TOOL_ARGUMENTS = {
  agentId: { type: 'string', minLength: 1, maxLength: SCHEDULING_LIMITS.agentIdMaxLength },
  duration: { type: 'integer', minimum: L.durationMin, maximum: L.durationMax, description: `slot length in minutes, ${L.durationMin} to ${L.durationMax}` },
  granularity: {
    type: 'integer',
    minimum: L.granularityMin,
    maximum: L.granularityMax,
    default: L.granularityDefault,
    description: `minutes between candidate starts (multiples since 1970-01-01T00:00Z), ${L.granularityMin} to ${L.granularityMax}`,
  },
} as const;

const { dateTime } = TOOL_ARGUMENTS;
const { agentId, duration, granularity } = AVAILABILITY_TOOL_ARGUMENTS;

export function availabilityTools(availability: AvailabilityService): ToolDefinition<unknown>[] {
  return [
    tool<{ agentIds: string[]; duration: number; from: string; to: string; granularity: number; limit: number; after?: string }>({
      name: 'availability',
      description:
        `Free slots of \`duration\` minutes common to the calling agent and up to ${L.maxOtherAgents} others inside [from, to) (at most ${L.maxWindowDays} days), ` +
        'earliest first, every free grid start listed. Agents that do not share their free/busy with the caller (or do not exist) answer forbidden.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['agentIds', 'duration', 'from', 'to'],
        properties: {
          agentIds: { type: 'array', maxItems: L.maxOtherAgents, items: agentId, description: 'the other agents; the caller is always included' },
          duration,
          from: dateTime,
          to: dateTime,
          granularity,
          limit: { type: 'integer', minimum: 1, maximum: L.firstMax, default: L.firstDefault, description: `1 to ${L.firstMax}` },
          after: { type: 'string', minLength: 1, maxLength: 100, description: 'nextCursor of the previous page' },
        },
      },
      annotations: { readOnlyHint: true },
      run: async ({ agentIds, duration: minutes, from, to, granularity: step, limit, after }, { actor }) =>
        presentAvailabilityPage(
          await availability.find(await actor(), {
            agentIds,
            durationMinutes: minutes,
            from: new Date(from),
            to: new Date(to),
            granularityMinutes: step,
            first: limit,
            after: after === undefined ? undefined : decodeSlotCursor(after),
          }),
        ),
    }),
      tool<{ agentId?: string; startsAt: string; endsAt: string }>({
      name: 'check_slot',
      description:
        'Why not this slot: every reason [startsAt, endsAt) on an agent’s calendar (the caller’s own when agentId is absent) cannot be taken by ' +
        'the caller now, each with its cause (the booking or hold in the way, buffer, working hours, notice, advance, daily or weekly limit); ' +
        'available is true when there is none; forbidden when the agent does not share its free/busy with the caller.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['startsAt', 'endsAt'], properties: { agentId, startsAt: dateTime, endsAt: dateTime } },
      annotations: { readOnlyHint: true },
      run: async (args, { actor }) => presentSlotCheck(await availability.checkSlot(await actor(), args.agentId, new Date(args.startsAt), new Date(args.endsAt))),
    }),
  ];
}
