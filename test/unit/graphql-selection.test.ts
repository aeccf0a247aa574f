import { describe, expect, it } from '@jest/globals';
import { Kind, parse, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { selectedFieldNames } from '../../src/platform/graphql/selection.js';

/** The resolve info of the operation's first root field, as far as the selection reads it. */
function infoOf(text: string) {
  const document = parse(text);
  const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((fragment) => [fragment.name.value, fragment]),
  );
  const root = operation.selectionSet.selections.filter((selection): selection is FieldNode => selection.kind === Kind.FIELD);
  // The nodes of the first root field's response key (a field selected twice has both).
  const key = root[0]!.alias?.value ?? root[0]!.name.value;
  return { fieldNodes: root.filter((field) => (field.alias?.value ?? field.name.value) === key), fragments };
}

describe('selectedFieldNames', () => {
  it('names the fields at a path through aliases, fragment spreads, inline fragments and every node of the field', () => {
    const info = infoOf(`
      query {
        list: bookings { edges { node { id renamed: status ...Times ... on Booking { rrule } } } }
        list: bookings { edges { cursor node { version } } pageInfo { endCursor } }
      }
      fragment Times on Booking { startsAt ...Nested }
      fragment Nested on Booking { endsAt @skip(if: true) }
    `);
    expect([...selectedFieldNames(info, ['edges', 'node'])].sort()).toEqual(['endsAt', 'id', 'rrule', 'startsAt', 'status', 'version']);
    expect([...selectedFieldNames(info, ['edges'])].sort()).toEqual(['cursor', 'node']);
    expect([...selectedFieldNames(info, [])].sort()).toEqual(['edges', 'pageInfo']);
    expect([...selectedFieldNames(info, ['missing', 'node'])]).toEqual([]);
  });

  it('answers each array of nodes of the field by itself: the same first node with more nodes after it selects more', () => {
    const info = infoOf('query { bookings { edges { node { id } } } bookings { edges { node { status } } } }');
    expect([...selectedFieldNames({ ...info, fieldNodes: info.fieldNodes.slice(0, 1) }, ['edges', 'node'])]).toEqual(['id']);
    expect([...selectedFieldNames(info, ['edges', 'node'])].sort()).toEqual(['id', 'status']);
  });

  it('follows a fragment spread twice in one selection once, and answers a document from its first reading', () => {
    const info = infoOf('query { bookings { edges { node { ...A ...A ... on Booking { ...A } } } } } fragment A on Booking { id }');
    const names = selectedFieldNames(info, ['edges', 'node']);
    expect([...names]).toEqual(['id']);
    expect(selectedFieldNames(info, ['edges', 'node'])).toBe(names);
  });
});
