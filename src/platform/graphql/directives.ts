import { DirectiveLocation, GraphQLBoolean, GraphQLDirective, GraphQLEnumType, GraphQLInt } from 'graphql';

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

/** The directives the gateway's SDL defines, for type-graphql's `buildSchema`. */
export const GATEWAY_DIRECTIVES: readonly GraphQLDirective[] = [cacheControlDirective];

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
