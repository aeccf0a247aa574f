import { GraphQLScalarType } from 'graphql';
import { GraphQLDateTimeISO } from 'graphql-scalars';
import { toIsoString } from '../iso-time.js';

const builtIn = GraphQLDateTimeISO.toConfig();

/** What `toIsoString` writes: a string already in this form is the answer as it stands. */
const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The `DateTimeISO` scalar type-graphql uses for `Date`, unchanged in name, description and input
 * parsing, with a faster output (a list of bookings serialises four times per row): valid dates through
 * `toIsoString`, and the ISO strings a calendar page carries as they are. graphql-scalars would parse
 * such a string into a Date and format it again; anything else still goes to it, and is checked there.
 */
export const DateTimeIso = new GraphQLScalarType({
  ...builtIn,
  serialize: (value) => {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return toIsoString(value);
    if (typeof value === 'string' && CANONICAL.test(value)) return value;
    return builtIn.serialize(value);
  },
});
