import type { ConstraintErrors } from '../../platform/errors.js';
import { MAX_CALENDAR_FEEDS_PER_AGENT } from './sql/calendar-feeds-per-agent-limit.trigger.js';

/** The feed rules PostgreSQL holds, by constraint name (migrations/), and what a client is told. */
export const CALENDAR_FEED_CONSTRAINTS = {
  calendar_feeds_per_agent_limit: {
    code: 'limit_exceeded',
    message: `an agent has at most ${MAX_CALENDAR_FEEDS_PER_AGENT} calendar feeds; revoke one first`,
  },
} as const satisfies ConstraintErrors;
