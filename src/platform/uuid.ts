import { followsPattern, type PatternRule } from './formats.js';

/** Row ids are UUIDs (either case); a schema that refuses other ids states this pattern. */
export const UUID: PatternRule = {
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'a UUID',
};

/** Anything but a UUID cannot name a row (a 404, never a SQL error). */
export const isUuid = (value: string): boolean => followsPattern(value, UUID);
