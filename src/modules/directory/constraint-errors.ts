import type { ConstraintErrors } from '../../platform/errors.js';

/** The directory rules PostgreSQL holds, by constraint name (migrations/), and what a client is told. */
export const DIRECTORY_CONSTRAINTS = {
  tools_url_normalized_key: { code: 'conflict', message: 'a tool with this URL was already submitted' },
} as const satisfies ConstraintErrors;
