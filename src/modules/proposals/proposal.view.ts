/** How a proposal is presented, the same by REST and MCP (a module view, not an adapter's). */
import type { ProposalView } from './proposal.service.js';

/** Seed 000 `ProposalItem`. */
export function presentProposal(proposal: ProposalView) {
  return {
    id: proposal.id,
    proposerAgentId: proposal.proposerAgentId,
    targetAgentId: proposal.targetAgentId,
    startsAt: proposal.startsAt.toISOString(),
    endsAt: proposal.endsAt.toISOString(),
    status: proposal.status,
    createdAt: proposal.createdAt.toISOString(),
  };
}
