import { cursorText, encodeCursor, notACursor } from '../../platform/list-cursor.js';
import { isUuid } from '../../platform/uuid.js';

/** Keyset position in the newest-first `(createdAt, id)` order of proposals. */
export interface ProposalCursor {
  createdAt: Date;
  id: string;
}

const PROPOSAL_PREFIX = 'proposal:';

export function encodeProposalCursor(proposal: { createdAt: Date; id: string }): string {
  return encodeCursor(`${PROPOSAL_PREFIX}${proposal.createdAt.toISOString()}|${proposal.id}`);
}

export function decodeProposalCursor(cursor: string): ProposalCursor {
  const text = cursorText(cursor);
  const [createdAt, id, extra] = text.startsWith(PROPOSAL_PREFIX) ? text.slice(PROPOSAL_PREFIX.length).split('|') : [];
  const date = new Date(createdAt ?? '');
  if (!id || extra !== undefined || !isUuid(id) || Number.isNaN(date.getTime())) throw notACursor();
  return { createdAt: date, id };
}
