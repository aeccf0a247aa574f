import type { ConstraintErrors } from '../../platform/errors.js';

/** The proposal rules PostgreSQL holds, by constraint name, and what a client is told. */
export const PROPOSAL_CONSTRAINTS = {
  // Set by configuration; the service says the configured number (agents/fan-out-limits.ts).
  proposals_pending_per_target_limit: {
    code: 'limit_exceeded',
    message: 'the proposer has as many pending proposals to this target as PENDING_PROPOSALS_MAX allows',
  },
} as const satisfies ConstraintErrors;
