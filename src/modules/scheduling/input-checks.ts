import type { FieldErrors } from '../../platform/errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids of scheduling rows are UUIDs; anything else cannot name a row (a 404, never a SQL error). */
export const isUuid = (value: string): boolean => UUID.test(value);

/** A half-open range `[startsAt, endsAt)`: both real instants, and it must not be empty. */
export function checkRange(startsAt: Date, endsAt: Date, fields: FieldErrors): void {
  if (Number.isNaN(startsAt.getTime())) fields.startsAt = 'must be an RFC 3339 date-time with a time-zone offset';
  if (Number.isNaN(endsAt.getTime())) fields.endsAt = 'must be an RFC 3339 date-time with a time-zone offset';
  else if (!fields.startsAt && endsAt <= startsAt) fields.endsAt = 'must be after startsAt';
}
