import type { ConstraintErrors } from '../../platform/errors.js';
import { MAX_WEBHOOKS_PER_AGENT } from './sql/webhooks-per-agent-limit.trigger.js';

/** The webhook rules PostgreSQL holds, by constraint name (migrations/), and what a client is told. */
export const WEBHOOK_CONSTRAINTS = {
  webhooks_per_agent_limit: { code: 'limit_exceeded', message: `an agent has at most ${MAX_WEBHOOKS_PER_AGENT} webhooks; delete one first` },
} as const satisfies ConstraintErrors;
