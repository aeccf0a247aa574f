import { describe, expect, it } from '@jest/globals';
import { buildSchema, execute, getOperationAST, GraphQLEnumType, GraphQLObjectType, GraphQLSchema, parse } from 'graphql';
import { CompiledOperations } from '../../src/platform/graphql/compiled-operations.js';
import { leafShapeOf, leavesAreSerialized } from '../../src/platform/graphql/serialized-leaves.js';

const SDL = `
  scalar Instant
  enum Color { RED GREEN }
  interface Named { name: String }
  type Item implements Named { id: ID! name: String n: Int f: Float b: Boolean color: Color tags: [String!] at: Instant child: Item }
  type Query { item: Item items: [Item!]! named: Named }
  type Mutation { touch: Item }
`;
const schema = buildSchema(SDL);

const shapeOf = (query: string) => {
  const document = parse(query);
  return leafShapeOf(schema, document, getOperationAST(document)!);
};

describe('leafShapeOf', () => {
  it('checks the built-in scalars and enums of a query, through aliases, fragments and nested objects; not custom scalars', () => {
    const shape = shapeOf('{ item { ...F x: n child { id at } } } fragment F on Item { id color at }');
    expect(JSON.stringify(shape, (_key, value: unknown) => (value instanceof Set ? [...value] : value))).toBe(
      JSON.stringify([{ key: 'item', shape: [{ key: 'id', form: 'string' }, { key: 'color', form: ['RED', 'GREEN'] }, { key: 'x', form: 'int' }, { key: 'child', shape: [{ key: 'id', form: 'string' }] }] }]),
    );
  });

  it('cannot check a mutation, an interface or union selection, or an enum whose values are not their names', () => {
    expect(shapeOf('mutation { touch { id } }')).toBeUndefined();
    expect(shapeOf('{ named { name } }')).toBeUndefined();
    const renamed = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { e: { type: new GraphQLEnumType({ name: 'E', values: { A: { value: 'a' } } }) } } }) });
    const document = parse('{ e }');
    expect(leafShapeOf(renamed, document, getOperationAST(document)!)).toBeUndefined();
  });
});

describe('leavesAreSerialized', () => {
  const shape = shapeOf('{ items { id name n f b color tags at child { id } } }')!;
  const canonical = { id: 'i', name: 'n', n: 2_147_483_647, f: 1.5, b: false, color: 'RED', tags: ['a'], at: new Date(0), child: { id: 'c' } };
  const answer = (item: Record<string, unknown>) => ({ items: [canonical, item] });

  it('passes leaves already in their serialised form, and nulls and absent fields', () => {
    expect(leavesAreSerialized(shape, answer(canonical))).toBe(true);
    expect(leavesAreSerialized(shape, answer({ id: 'i', name: null, child: null, tags: null }))).toBe(true);
    expect(leavesAreSerialized(shape, null)).toBe(true);
  });

  it.each([
    ['a number for an ID', { id: 7 }],
    ['a number for a String', { name: 1 }],
    ['a string for an Int', { n: '3' }],
    ['an Int past 32 bits', { n: 2_147_483_648 }],
    ['a fraction for an Int', { n: 1.5 }],
    ['a string for a Float', { f: '1.5' }],
    ['NaN for a Float', { f: Number.NaN }],
    ['a number for a Boolean', { b: 0 }],
    ['a value that is no name of the enum', { color: 'BLUE' }],
    ['a number inside a list of strings', { tags: ['a', 1] }],
    ['a number for an ID of a nested object', { child: { id: 1 } }],
  ])('fails %s', (_label, item) => {
    expect(leavesAreSerialized(shape, answer({ ...canonical, ...item }))).toBe(false);
  });
});

describe('CompiledOperations with unserialised leaves', () => {
  const resolved = buildSchema(SDL);
  resolved.getQueryType()!.getFields().items!.resolve = (_root, _args, context: { items: unknown[] }) => context.items;
  const query = '{ items { id name n f b color tags at } }';
  const execution = (item: Record<string, unknown>) => {
    const reruns = { count: 0 };
    const ops = new CompiledOperations(resolved, { compileAfterSeen: 1, leafReruns: { inc: () => void reruns.count++ } });
    const document = parse(query);
    const contextValue = { items: [item, { ...item, id: 'canonical' }] };
    return {
      reruns,
      compiled: async () => ops.execute({ documentKey: query, document, operationName: undefined, operation: getOperationAST(document)!, contextValue, variableValues: undefined }),
      interpreted: async () => execute({ schema: resolved, document, contextValue }),
    };
  };

  it('answers a query whose leaves came serialised without running it again', async () => {
    const { reruns, compiled, interpreted } = execution({ id: 'a', name: 'x', n: 1, f: 2.5, b: true, color: 'GREEN', tags: ['t'], at: 'then' });
    const answer = await compiled();
    expect(answer).toEqual(await interpreted());
    expect(answer.data).toEqual({ items: [{ id: 'a', name: 'x', n: 1, f: 2.5, b: true, color: 'GREEN', tags: ['t'], at: 'then' }, expect.objectContaining({ id: 'canonical' })] });
    expect(reruns.count).toBe(0);
  });

  it('runs a query again with serialisers when a leaf did not come serialised, and answers what graphql-js answers', async () => {
    const { reruns, compiled, interpreted } = execution({ id: 7, name: 8, n: '3', f: '2.5', b: 1, color: 'RED', tags: [1], at: 'then' });
    const answer = await compiled();
    expect(answer).toEqual(await interpreted());
    expect(answer.data).toEqual({ items: [{ id: '7', name: '8', n: 3, f: 2.5, b: true, color: 'RED', tags: ['1'], at: 'then' }, expect.objectContaining({ id: 'canonical' })] });
    expect(reruns.count).toBe(1);
  });
});
