import { GraphQLError, Kind, type DocumentNode, type SelectionSetNode } from 'graphql';
import { fragmentsOf } from './document-fragments.js';

/**
 * `@skip` and `@include` on a subscription's root selections, refused as the GraphQL specification now
 * does (graphql-js 17 has the rule): a subscription has exactly one root field, always there. graphql-js 16
 * reads them in its single-root-field rule without the operation's variables and throws from inside
 * validation (a variable condition), or lets through a subscription with no field at all (`@skip(if:
 * true)`), whose stream then fails to start: a 500 or a closed socket instead of a validation error.
 * Checked before graphql-js validates, by every transport that carries subscriptions.
 */
export function subscriptionRootConditionErrors(document: DocumentNode): GraphQLError[] {
  const fragments = fragmentsOf(document);
  const errors: GraphQLError[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION || definition.operation !== 'subscription') continue;
    const name = definition.name ? `Subscription "${definition.name.value}"` : 'An anonymous subscription';
    const visited = new Set<string>();
    const walk = (selectionSet: SelectionSetNode): void => {
      for (const selection of selectionSet.selections) {
        for (const directive of selection.directives ?? []) {
          if (directive.name.value === 'skip' || directive.name.value === 'include') {
            errors.push(new GraphQLError(`${name} must not use @${directive.name.value} on its root field: a subscription has exactly one, always selected.`, { nodes: directive }));
          }
        }
        if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
        if (selection.kind === Kind.FRAGMENT_SPREAD && !visited.has(selection.name.value)) {
          visited.add(selection.name.value);
          const fragment = fragments.get(selection.name.value);
          if (fragment) walk(fragment.selectionSet);
        }
      }
    };
    walk(definition.selectionSet);
  }
  return errors;
}

/**
 * Whether a query text might hold such a subscription: the cheap test that keeps every other text from
 * being parsed once more before Apollo Server parses it. The directives' names alone: GraphQL allows white
 * space, commas and comments between `@` and a name.
 */
export function mayConditionSubscriptionRoot(query: string): boolean {
  return query.includes('subscription') && (query.includes('skip') || query.includes('include'));
}
