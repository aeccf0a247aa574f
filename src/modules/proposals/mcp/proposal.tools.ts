import { tool, TOOL_ARGUMENTS, type ToolDefinition } from '../../../platform/mcp/tool.js';
import { AVAILABILITY_TOOL_ARGUMENTS } from '../../availability/index.js';
import type { ProposalService } from '../proposal.service.js';
import { PROPOSAL_ARGUMENTS } from '../proposal.arguments.js';
import { presentProposal } from '../proposal.view.js';

const { dateTime } = TOOL_ARGUMENTS;
const { agentId, duration, granularity } = AVAILABILITY_TOOL_ARGUMENTS;
const DECISIONS = ['accept', 'reject', 'decline', 'withdraw'] as const;

/** The MCP tools of slot-transfer proposals, answering the ProposalItem as REST does. */
export function proposalTools(proposals: ProposalService): ToolDefinition<unknown>[] {
  return [
    tool<{ targetAgentId: string; startsAt: string; endsAt: string }>({
      name: 'propose_slot',
      description: 'Asks another agent to hand over the slot [startsAt, endsAt); the proposal starts pending.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['targetAgentId', 'startsAt', 'endsAt'],
        properties: { targetAgentId: PROPOSAL_ARGUMENTS.targetAgentId, startsAt: dateTime, endsAt: dateTime },
      },
      run: async ({ targetAgentId, startsAt, endsAt }, { actor }) =>
        presentProposal(await proposals.create(await actor(), { targetAgentId, startsAt: new Date(startsAt), endsAt: new Date(endsAt) })),
    }),
    tool<{ targetAgentId: string; duration: number; from: string; to: string; granularity: number }>({
      name: 'propose_first_available',
      description:
        'Finds the earliest free slot common to the calling agent and the target inside [from, to) and opens a pending proposal for it. ' +
        'slot_taken when a booking took it meanwhile (ask again); conflict when there is no common slot; forbidden when the target does not share its free/busy.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['targetAgentId', 'duration', 'from', 'to'],
        properties: { targetAgentId: agentId, duration, from: dateTime, to: dateTime, granularity },
      },
      run: async ({ targetAgentId, duration: minutes, from, to, granularity: step }, { actor }) =>
        presentProposal(
          await proposals.proposeFirstAvailable(await actor(), { targetAgentId, durationMinutes: minutes, from: new Date(from), to: new Date(to), granularityMinutes: step }),
        ),
    }),
    tool<{ proposalId: string; decision: (typeof DECISIONS)[number] }>({
      name: 'respond_to_proposal',
      description: 'accept or reject (target), decline (target, final) or withdraw (proposer) a proposal.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['proposalId', 'decision'],
        properties: { proposalId: { type: 'string', minLength: 1 }, decision: { type: 'string', enum: DECISIONS } },
      },
      run: async ({ proposalId, decision }, { actor }) => presentProposal(await proposals[decision](await actor(), proposalId)),
    }),
  ];
}
