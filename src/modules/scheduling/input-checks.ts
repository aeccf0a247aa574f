import type { FieldErrors } from '../../platform/errors.js';
import { followsPattern, type PatternRule } from '../../platform/formats.js';

/** Ids of scheduling rows are UUIDs (either case); a schema that refuses other ids states this pattern. */
export const UUID: PatternRule = {
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'a UUID',
};

/** Anything but a UUID cannot name a row (a 404, never a SQL error). */
export const isUuid = (value: string): boolean => followsPattern(value, UUID);

/**
 * The instants a booking may occupy. A recurrence is expanded from its first occurrence, so a
 * series that starts centuries ago costs centuries of steps on every read: the range keeps every
 * expansion within a bounded distance of today (and keeps years 0–99 away from `Date.UTC`, which
 * reads them as 19xx).
 */
export const BOOKABLE_TIME = {
  from: new Date('2000-01-01T00:00:00Z'),
  before: new Date('2200-01-01T00:00:00Z'),
} as const;

const OUTSIDE_BOOKABLE_TIME = `must be from ${BOOKABLE_TIME.from.toISOString()} and before ${BOOKABLE_TIME.before.toISOString()}`;
const bookable = (instant: Date) => instant >= BOOKABLE_TIME.from && instant < BOOKABLE_TIME.before;

/** A half-open range `[startsAt, endsAt)`: both real, bookable instants, and it must not be empty. */
export function checkRange(startsAt: Date, endsAt: Date, fields: FieldErrors): void {
  if (Number.isNaN(startsAt.getTime())) fields.startsAt = 'must be an RFC 3339 date-time with a time-zone offset';
  else if (!bookable(startsAt)) fields.startsAt = OUTSIDE_BOOKABLE_TIME;
  if (Number.isNaN(endsAt.getTime())) fields.endsAt = 'must be an RFC 3339 date-time with a time-zone offset';
  else if (endsAt > BOOKABLE_TIME.before || endsAt < BOOKABLE_TIME.from) fields.endsAt = OUTSIDE_BOOKABLE_TIME;
  else if (!fields.startsAt && endsAt <= startsAt) fields.endsAt = 'must be after startsAt';
}
