import { Kind, type DocumentNode, type FragmentDefinitionNode } from 'graphql';

/** The fragment definitions of a document, by name: what every walk through fragment spreads looks up. */
export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  return fragments;
}
