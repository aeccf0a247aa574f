import { cursorText, encodeCursor, isoOf, notACursor } from '../../platform/list-cursor.js';
import { isUuid } from '../../platform/uuid.js';

/** Keyset position in the `(startsAt, id)` order of a calendar. */
export interface BookingCursor {
  startsAt: Date;
  id: string;
}

/** `startsAt|id` (the form GraphQL's `bookings` has always handed out). */
export function encodeBookingCursor(booking: { startsAt: Date | string; id: string }): string {
  return encodeCursor(`${isoOf(booking.startsAt)}|${booking.id}`);
}

export function decodeBookingCursor(cursor: string): BookingCursor {
  const [startsAt, id, extra] = cursorText(cursor).split('|');
  const date = new Date(startsAt ?? '');
  if (!id || extra !== undefined || !isUuid(id) || Number.isNaN(date.getTime())) throw notACursor();
  return { startsAt: date, id };
}

const OCCURRENCE_PREFIX = 'occurrence:';

/** The start of the last occurrence listed: the next page holds those starting after it. */
export function encodeOccurrenceCursor(occurrence: { startsAt: Date }): string {
  return encodeCursor(`${OCCURRENCE_PREFIX}${occurrence.startsAt.toISOString()}`);
}

export function decodeOccurrenceCursor(cursor: string): Date {
  const text = cursorText(cursor);
  const date = text.startsWith(OCCURRENCE_PREFIX) ? new Date(text.slice(OCCURRENCE_PREFIX.length)) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw notACursor();
  return date;
}
