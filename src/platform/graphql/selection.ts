import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

type SelectionInfo = Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>;

// By the resolving field's first node and path: a cached document's nodes are the same objects from one
// request to the next, so each document's answer is worked out once.
const known = new WeakMap<FieldNode, Map<string, ReadonlySet<string>>>();

/**
 * The names of the fields selected at `path` below the resolving field (`['edges', 'node']`: a
 * connection's nodes), through aliases, fragment spreads and inline fragments. `@skip` and `@include`
 * are not evaluated: a field they may leave out is still named, which costs reading it and keeps the
 * answer one per document.
 */
export function selectedFieldNames(info: SelectionInfo, path: readonly string[]): ReadonlySet<string> {
  const first = info.fieldNodes[0];
  if (!first) return new Set();
  const key = path.join('.');
  let byPath = known.get(first);
  if (!byPath) known.set(first, (byPath = new Map()));
  let names = byPath.get(key);
  if (!names) {
    let level = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    for (const name of path) level = fieldsOf(info, level).flatMap((field) => (field.name.value === name && field.selectionSet ? [field.selectionSet] : []));
    names = new Set(fieldsOf(info, level).map((field) => field.name.value));
    byPath.set(key, names);
  }
  return names;
}

/** The fields of the selection sets, fragments spread in. */
function fieldsOf(info: SelectionInfo, selectionSets: readonly SelectionSetNode[]): FieldNode[] {
  const fields: FieldNode[] = [];
  const visited = new Set<string>();
  const visit = (selectionSet: SelectionSetNode): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = info.fragments[selection.name.value];
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  for (const selectionSet of selectionSets) visit(selectionSet);
  return fields;
}
