import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import {
  getDirectiveValues,
  getNamedType,
  isCompositeType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { cacheControlDirective, type CacheHint } from './directives.js';

/** How long, and for whom, an answer may be kept; maxAge 0 means not at all. */
export interface CachePolicy {
  readonly maxAge: number;
  readonly scope: 'PUBLIC' | 'PRIVATE';
}

const UNCACHEABLE: CachePolicy = { maxAge: 0, scope: 'PRIVATE' };

/**
 * The cache policy of an operation, read from the `@cacheControl` hints of the types and fields it
 * selects, with Apollo's rules: a field's hint replaces its type's; an object field or a root field
 * without a `maxAge` counts as 0; a leaf field inherits its parent's; the answer's policy is the
 * smallest maxAge and PRIVATE if any part is. It is decided from the document alone (fragments under
 * `@skip`/`@include` included), before execution, so it holds however the operation runs (compiled or
 * not: Apollo's own cache-control plugin needs graphql-js's per-field hooks). Mutations and
 * subscriptions are never cacheable.
 */
export function cachePolicyOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): CachePolicy {
  if (operation.operation !== 'query') return UNCACHEABLE;
  let maxAge = Number.POSITIVE_INFINITY;
  let scope: CachePolicy['scope'] = 'PUBLIC';
  const root = schema.getQueryType();
  const typeInfo = new TypeInfo(schema);
  const definitions = document.definitions.filter((definition) => definition === operation || definition.kind === Kind.FRAGMENT_DEFINITION);
  visit(
    { kind: Kind.DOCUMENT, definitions },
    visitWithTypeInfo(typeInfo, {
      Field: () => {
        const field = typeInfo.getFieldDef();
        const parent = typeInfo.getParentType();
        if (!field || !parent) return;
        const type = getNamedType(field.type);
        const hint = fieldHint(field, type, parent === root);
        if (hint.maxAge !== undefined) maxAge = Math.min(maxAge, hint.maxAge);
        if (hint.scope === 'PRIVATE') scope = 'PRIVATE';
      },
    }),
  );
  return maxAge === Number.POSITIVE_INFINITY || maxAge <= 0 ? UNCACHEABLE : { maxAge, scope };
}

function fieldHint(field: GraphQLField<unknown, unknown>, type: GraphQLNamedType, isRootField: boolean): CacheHint {
  const typeHint = isCompositeType(type) ? hintOf(type.astNode) : {};
  const own = hintOf(field.astNode);
  const hint = { ...typeHint, ...own };
  if (hint.maxAge === undefined && (isCompositeType(type) || isRootField)) return { ...hint, maxAge: 0 };
  return hint;
}

function hintOf(node: Parameters<typeof getDirectiveValues>[1] | null | undefined): CacheHint {
  if (!node) return {};
  const values = getDirectiveValues(cacheControlDirective, node) as CacheHint | undefined;
  return values ?? {};
}

/**
 * Sets `Cache-Control` on every GraphQL answer over HTTP from the operation's policy: a query whose
 * every part is hinted public (the GPU prices, the tool directory) answers `public, max-age=N`, one
 * that reads any caller's data `private, no-store`, as do mutations, answers with errors and requests
 * that never reached an operation. Policies are kept per document and operation (at most 1,000).
 */
export function cachePolicyPlugin<Context extends object>(schema: GraphQLSchema): ApolloServerPlugin<Context> {
  const policies = new LRUCache<string, CachePolicy>({ max: 1_000 });
  const byRequest = new WeakMap<object, CachePolicy>();
  // One listener for every request (the hot path): the policy travels in a WeakMap keyed by the request.
  const listener: GraphQLRequestListener<Context> = {
    didResolveOperation: async (requestContext) => {
      const { queryHash, document, operation } = requestContext;
      if (!operation) return;
      const key = `${queryHash}:${requestContext.operationName ?? ''}`;
      let policy = policies.get(key);
      if (!policy) policies.set(key, (policy = cachePolicyOf(schema, document, operation)));
      byRequest.set(requestContext.request, policy);
    },
    willSendResponse: async ({ request, response }) => {
      const policy = byRequest.get(request) ?? UNCACHEABLE;
      const clean = response.body.kind === 'single' && !response.body.singleResult.errors?.length;
      response.http.headers.set('cache-control', clean && policy.maxAge > 0 ? `${policy.scope.toLowerCase()}, max-age=${policy.maxAge}` : 'private, no-store');
    },
  };
  return { requestDidStart: async () => listener };
}
