import { GraphQLScalarType } from 'graphql';
import { GraphQLDateTimeISO } from 'graphql-scalars';
import { toIsoString } from '../iso-time.js';

const builtIn = GraphQLDateTimeISO.toConfig();

/**
 * The `DateTimeISO` scalar type-graphql uses for `Date`, unchanged in name, description and input
 * parsing, with a faster output for valid dates (see `toIsoString`): a list of bookings serialises
 * four of them per row.
 */
export const DateTimeIso = new GraphQLScalarType({
  ...builtIn,
  serialize: (value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? toIsoString(value) : builtIn.serialize(value)),
});
