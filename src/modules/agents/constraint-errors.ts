import type { ConstraintErrors } from '../../platform/errors.js';

/** The agent rules PostgreSQL holds, by constraint name (migrations/), and what a client is told. */
export const AGENT_CONSTRAINTS = {
  agents_single_root: { code: 'bootstrap_claimed', message: 'bootstrap is no longer available: this installation already has its first agent' },
  agents_idempotency_key_key: { code: 'conflict', message: 'idempotency_key was already used to create an agent' },
  // Bounds set by configuration; the services say the configured number (fan-out-limits.ts).
  agents_family_limit: { code: 'limit_exceeded', message: 'the agent family (the root agent and all its descendants) holds as many agents as AGENT_FAMILY_MAX allows' },
} as const satisfies ConstraintErrors;
