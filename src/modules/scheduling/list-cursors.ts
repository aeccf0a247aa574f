import { AppError } from '../../platform/errors.js';
import { isUuid } from './input-checks.js';

/**
 * Where a page of a list ends, opaque to clients. One text per list, whichever adapter hands it out:
 * GraphQL's `endCursor`, the `after` of REST's `Link: <…>; rel="next"` and MCP's `nextCursor` are the
 * same cursor, and each adapter accepts it back as `after`. Every part is checked before it reaches SQL.
 */

/** Keyset position in the `(startsAt, id)` order of a calendar. */
export interface BookingCursor {
  startsAt: Date;
  id: string;
}

/** Keyset position in the newest-first `(createdAt, id)` order of proposals. */
export interface ProposalCursor {
  createdAt: Date;
  id: string;
}

const iso = (value: Date | string) => (typeof value === 'string' ? value : value.toISOString());
const encode = (text: string) => Buffer.from(text).toString('base64url');
const notACursor = () => AppError.validation({ after: 'is not a cursor from this list' });

/** `startsAt|id` (the form GraphQL's `bookings` has always handed out). */
export function encodeBookingCursor(booking: { startsAt: Date | string; id: string }): string {
  return encode(`${iso(booking.startsAt)}|${booking.id}`);
}

export function decodeBookingCursor(cursor: string): BookingCursor {
  const [startsAt, id, extra] = Buffer.from(cursor, 'base64url').toString().split('|');
  const date = new Date(startsAt ?? '');
  if (!id || extra !== undefined || !isUuid(id) || Number.isNaN(date.getTime())) throw notACursor();
  return { startsAt: date, id };
}

const PROPOSAL_PREFIX = 'proposal:';

export function encodeProposalCursor(proposal: { createdAt: Date; id: string }): string {
  return encode(`${PROPOSAL_PREFIX}${proposal.createdAt.toISOString()}|${proposal.id}`);
}

export function decodeProposalCursor(cursor: string): ProposalCursor {
  const text = Buffer.from(cursor, 'base64url').toString();
  const [createdAt, id, extra] = text.startsWith(PROPOSAL_PREFIX) ? text.slice(PROPOSAL_PREFIX.length).split('|') : [];
  const date = new Date(createdAt ?? '');
  if (!id || extra !== undefined || !isUuid(id) || Number.isNaN(date.getTime())) throw notACursor();
  return { createdAt: date, id };
}

const OCCURRENCE_PREFIX = 'occurrence:';

/** The start of the last occurrence listed: the next page holds those starting after it. */
export function encodeOccurrenceCursor(occurrence: { startsAt: Date }): string {
  return encode(`${OCCURRENCE_PREFIX}${occurrence.startsAt.toISOString()}`);
}

export function decodeOccurrenceCursor(cursor: string): Date {
  const text = Buffer.from(cursor, 'base64url').toString();
  const date = text.startsWith(OCCURRENCE_PREFIX) ? new Date(text.slice(OCCURRENCE_PREFIX.length)) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw notACursor();
  return date;
}
