import type { ConstraintErrors } from '../../platform/errors.js';
import { MAX_CALENDAR_FEEDS_PER_AGENT } from './entities/calendar-feed.entity.js';
import { MAX_WEBHOOKS_PER_AGENT } from './entities/webhook.entity.js';

/** The scheduling rules PostgreSQL holds, by constraint name (migrations/), and what a client is told. */
export const SCHEDULING_CONSTRAINTS = {
  booking_slots_no_overlap: { code: 'slot_taken', message: 'the time range overlaps another confirmed booking on that calendar' },
  agents_single_root: { code: 'bootstrap_claimed', message: 'bootstrap is no longer available: this installation already has its first agent' },
  agents_idempotency_key_key: { code: 'conflict', message: 'idempotency_key was already used to create an agent' },
  webhooks_per_agent_limit: { code: 'limit_exceeded', message: `an agent has at most ${MAX_WEBHOOKS_PER_AGENT} webhooks; delete one first` },
  // Bounds set by configuration; the services say the configured number (fan-out-limits.ts).
  agents_family_limit: { code: 'limit_exceeded', message: 'the agent family (the root agent and all its descendants) holds as many agents as AGENT_FAMILY_MAX allows' },
  proposals_pending_per_target_limit: {
    code: 'limit_exceeded',
    message: 'the proposer has as many pending proposals to this target as PENDING_PROPOSALS_MAX allows',
  },
  calendar_feeds_per_agent_limit: {
    code: 'limit_exceeded',
    message: `an agent has at most ${MAX_CALENDAR_FEEDS_PER_AGENT} calendar feeds; revoke one first`,
  },
} as const satisfies ConstraintErrors;
