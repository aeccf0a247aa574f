import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

type SelectionInfo = Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>;

// By the resolving field's nodes (the array: which nodes it holds depends on the operation, and on
// graphql-js's reading of `@skip`/`@include` on the field itself) and path. graphql-jit hands a compiled
// operation's resolver the same array every time, so its answer is worked out once; graphql-js makes the
// array anew for each execution, and the answer with it.
const known = new WeakMap<readonly FieldNode[], Map<string, ReadonlySet<string>>>();

/**
 * The names of the fields selected at `path` below the resolving field (`['edges', 'node']`: a
 * connection's nodes), through aliases, fragment spreads and inline fragments, in every node of the
 * field. `@skip` and `@include` below the field are not evaluated: a field they may leave out is still
 * named, which costs reading it, not answering it.
 */
export function selectedFieldNames(info: SelectionInfo, path: readonly string[]): ReadonlySet<string> {
  const key = path.join('.');
  let byPath = known.get(info.fieldNodes);
  if (!byPath) known.set(info.fieldNodes, (byPath = new Map()));
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
