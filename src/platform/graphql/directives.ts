import { DirectiveLocation, GraphQLBoolean, GraphQLDirective, GraphQLEnumType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';

/** Apollo's cache-control scope: PUBLIC answers may be shared by caches, PRIVATE only by the caller's own. */
const CacheControlScope = new GraphQLEnumType({ name: 'CacheControlScope', values: { PUBLIC: {}, PRIVATE: {} } });

/**
 * Apollo's `@cacheControl` (the same definition Apollo Server documents), read statically per operation
 * by cache-policy.ts: a type's or field's `maxAge` in seconds and `scope`. Unhinted object fields and
 * root fields count as `maxAge: 0`, so an answer is cacheable only where every part of it says so.
 */
export const cacheControlDirective = new GraphQLDirective({
  name: 'cacheControl',
  locations: [DirectiveLocation.FIELD_DEFINITION, DirectiveLocation.OBJECT, DirectiveLocation.INTERFACE, DirectiveLocation.UNION],
  args: { maxAge: { type: GraphQLInt }, scope: { type: CacheControlScope }, inheritMaxAge: { type: GraphQLBoolean } },
});

/**
 * IBM's GraphQL Cost Directives specification: `@cost(weight:)` on a field, type, argument, input
 * field, scalar or enum replaces its default weight (object types 1, scalars and enums 0). The weight
 * is a string in the specification (it may be a decimal).
 */
export const costDirective = new GraphQLDirective({
  name: 'cost',
  locations: [
    DirectiveLocation.ARGUMENT_DEFINITION,
    DirectiveLocation.ENUM,
    DirectiveLocation.FIELD_DEFINITION,
    DirectiveLocation.INPUT_FIELD_DEFINITION,
    DirectiveLocation.OBJECT,
    DirectiveLocation.SCALAR,
  ],
  args: { weight: { type: new GraphQLNonNull(GraphQLString) } },
});

/**
 * IBM's `@listSize` on a list field (or a connection field, with `sizedFields`): how many items it
 * holds, from the largest of its `slicingArguments` the operation sets (`first`, `limit`), else
 * `assumedSize`; `sizedFields` names the lists of the returned object the size applies to (a Relay
 * connection's `edges`).
 */
export const listSizeDirective = new GraphQLDirective({
  name: 'listSize',
  locations: [DirectiveLocation.FIELD_DEFINITION],
  args: {
    assumedSize: { type: GraphQLInt },
    slicingArguments: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
    sizedFields: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
    requireOneSlicingArgument: { type: GraphQLBoolean, defaultValue: true },
  },
});

/** The directives the gateway's SDL defines, for type-graphql's `buildSchema`. */
export const GATEWAY_DIRECTIVES: readonly GraphQLDirective[] = [cacheControlDirective, costDirective, listSizeDirective];

/** `@cost(weight: "…")` for type-graphql's `@Directive`. */
export function cost(weight: number): string {
  return `@cost(weight: "${weight}")`;
}

/** What `@listSize` states about a list field. */
export interface ListSize {
  readonly assumedSize?: number;
  readonly slicingArguments?: readonly string[];
  readonly sizedFields?: readonly string[];
  readonly requireOneSlicingArgument?: boolean;
}

/** `@listSize(…)` for type-graphql's `@Directive`. */
export function listSize(size: ListSize): string {
  const list = (names: readonly string[]) => `[${names.map((name) => JSON.stringify(name)).join(', ')}]`;
  const args = [
    size.assumedSize !== undefined ? `assumedSize: ${size.assumedSize}` : '',
    size.slicingArguments ? `slicingArguments: ${list(size.slicingArguments)}` : '',
    size.sizedFields ? `sizedFields: ${list(size.sizedFields)}` : '',
    size.requireOneSlicingArgument !== undefined ? `requireOneSlicingArgument: ${size.requireOneSlicingArgument}` : '',
  ].filter(Boolean);
  return `@listSize(${args.join(', ')})`;
}

/** A cache hint as `@cacheControl` states it. */
export interface CacheHint {
  readonly maxAge?: number;
  readonly scope?: 'PUBLIC' | 'PRIVATE';
}

/** `@cacheControl(…)` for type-graphql's `@Directive` on a type or field. */
export function cacheControl(hint: CacheHint): string {
  const args = [hint.maxAge !== undefined ? `maxAge: ${hint.maxAge}` : '', hint.scope ? `scope: ${hint.scope}` : ''].filter(Boolean);
  return `@cacheControl(${args.join(', ')})`;
}
