import { AppError } from '../../platform/errors.js';

/** A party to a proposal. */
export type ProposalParty = 'proposer' | 'target';

/**
 * Who may do what with a proposal, decided here (the `accept_proposal` function, which decides accept
 * inside its transaction, answers `forbidden` by the same row). Anyone else is refused.
 */
export const PROPOSAL_ACCESS = {
  read: ['proposer', 'target'],
  accept: ['target'],
  reject: ['target'],
  decline: ['target'],
  withdraw: ['proposer'],
} as const satisfies Record<string, readonly ProposalParty[]>;

export type ProposalAction = keyof typeof PROPOSAL_ACCESS;

const REFUSALS: Record<ProposalAction, string> = {
  read: 'the proposal is between other agents',
  accept: 'only the target agent may accept',
  reject: 'only the target agent may reject',
  decline: 'only the target agent may decline',
  withdraw: 'only the proposer agent may withdraw',
};

/** Fails with `forbidden` unless the calling agent is a party the action allows. */
export function requireParty(actorId: string, proposal: { proposerId: string; targetId: string }, action: ProposalAction): void {
  const parties: readonly ProposalParty[] = PROPOSAL_ACCESS[action];
  const allowed = (parties.includes('proposer') && proposal.proposerId === actorId) || (parties.includes('target') && proposal.targetId === actorId);
  if (!allowed) throw refusal(action);
}

/** The refusal of an action, also where SQL made the same decision. */
export function refusal(action: ProposalAction): AppError {
  return new AppError('forbidden', REFUSALS[action]);
}
