import { UUID } from '../../platform/uuid.js';

/** Argument schemas REST bodies and MCP tools of proposals share, so a mistake gets the same words on both. */
export const PROPOSAL_ARGUMENTS = {
  targetAgentId: { type: 'string', format: 'uuid', pattern: UUID.pattern, description: 'the id of another existing agent (a UUID)' },
} as const;
