const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Row ids are UUIDs; anything else cannot name a row (a 404, never a SQL error). */
export const isUuid = (value: string): boolean => UUID.test(value);
