import { namedStatement } from '../../../platform/db/statements.js';
import type { WrittenEvents } from '../../bookings/index.js';
import type { BookingItem } from '../../bookings/index.js';
import type { ProposalStatus } from '../entities/proposal.entity.js';
import type { Refusal } from '../../availability-rules/index.js';

export interface ProposalRow {
  id: string;
  proposer_agent_id: string;
  target_agent_id: string;
  starts_at: string;
  ends_at: string;
  status: ProposalStatus;
  booking_id: string | null;
  created_at: string;
}

/** What `accept_proposal` answers. */
export type AcceptProposalOutcome =
  | { missing: true }
  | { forbidden: true }
  | { notPending: ProposalStatus }
  /** A rule of the target's (its hours, notice, advance) or of the proposer's, if it enforces them on itself. */
  | { refused: Refusal }
  | ({ proposal: ProposalRow; booking: BookingItem } & WrittenEvents);

/** Accepting in one round trip: about a dozen ORM statements (locks, update, lookup, moves, events) become one. */
export const ACCEPT_PROPOSAL = namedStatement<[actorId: string, proposalId: string, at: Date], { outcome: AcceptProposalOutcome }>(
  'accept_proposal',
  'select accept_proposal($1::uuid, $2::uuid, $3::timestamptz) as outcome',
);
