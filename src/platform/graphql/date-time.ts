import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { GraphQLDateTimeISO } from 'graphql-scalars';
import { parseRfc3339DateTime, toIsoString } from '../iso-time.js';

const builtIn = GraphQLDateTimeISO.toConfig();

/** What `toIsoString` writes: a string already in this form is the answer as it stands. */
const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** An input string read by the rule REST's `date-time` format and MCP apply too. */
function parseText(text: string, node?: ValueNode): Date {
  const instant = parseRfc3339DateTime(text);
  if (!instant) throw new GraphQLError('DateTimeISO must be an RFC 3339 date-time with a time-zone offset', node ? { nodes: node } : undefined);
  return instant;
}

/**
 * The `DateTimeISO` scalar type-graphql uses for `Date`, unchanged in name and description. Input
 * strings go through `parseRfc3339DateTime`, the one date-time rule of every surface. Output is faster
 * than graphql-scalars' (a list of bookings serialises four times per row): valid dates through
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
  parseValue: (value) => (typeof value === 'string' ? parseText(value) : builtIn.parseValue(value)),
  parseLiteral: (node, variables) => (node.kind === Kind.STRING ? parseText(node.value, node) : builtIn.parseLiteral(node, variables)),
});
