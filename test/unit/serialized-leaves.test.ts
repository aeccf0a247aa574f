import { describe, expect, it } from '@jest/globals';
import { buildSchema, execute, getOperationAST, GraphQLEnumType, GraphQLObjectType, GraphQLSchema, parse } from 'graphql';
import { CompiledOperations } from '../../src/platform/graphql/compiled-operations.js';
import { leafShapeOf, leavesAreSerialized } from '../../src/platform/graphql/serialized-leaves.js';

const SDL = `
  scalar Instant
  enum Color { RED GREEN }
  interface Named { name: String }
  type Item implements Named { id: ID! name: String n: Int f: Float b: Boolean color: Color tags: [String!] at: Instant child: Item }
  type Query { item: Item items: [Item!]! maybe: [Item] named: Named }
  type Mutation { touch: Item }
`;
const schema = buildSchema(SDL);

const shapeOf = (query: string) => {
  const document = parse(query);
  return leafShapeOf(schema, document, getOperationAST(document)!);
};

describe('leafShapeOf', () => {
  it('checks the built-in scalars and enums of a query, through aliases, fragments and nested objects; not custom scalars', () => {
    type Projected = { key: string; form?: unknown; shape?: Projected[] };
    const project = (shape: readonly { key: string; leaf?: { form: unknown }; shape?: readonly unknown[] }[]): Projected[] =>
      shape.map((field) => ({
        key: field.key,
        ...(field.leaf ? { form: field.leaf.form instanceof Set ? [...field.leaf.form] : field.leaf.form } : {}),
        ...(field.shape ? { shape: project(field.shape as never) } : {}),
      }));
    expect(project(shapeOf('{ item { ...F x: n child { id at } } } fragment F on Item { id color at }')!)).toEqual([
      { key: 'item', shape: [{ key: 'id', form: 'string' }, { key: 'color', form: ['RED', 'GREEN'] }, { key: 'x', form: 'int' }, { key: 'child', shape: [{ key: 'id', form: 'string' }] }] },
    ]);
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
    ['a list for a String', { name: ['a'] }],
    ['a list for an Int', { n: [1, 2] }],
  ])('fails %s', (_label, item) => {
    expect(leavesAreSerialized(shape, answer({ ...canonical, ...item }))).toBe(false);
  });
});

describe('CompiledOperations with unserialised leaves', () => {
  const resolved = buildSchema(SDL);
  let resolverCalls = 0;
  for (const name of ['items', 'maybe'] as const) {
    resolved.getQueryType()!.getFields()[name]!.resolve = (_root, _args, context: { items: unknown[] }) => (resolverCalls++, context.items);
  }
  const execution = (query: string, items: Record<string, unknown>[]) => {
    const repairs = { count: 0 };
    const ops = new CompiledOperations(resolved, { compileAfterSeen: 1, leafRepairs: { inc: () => void repairs.count++ } });
    const document = parse(query);
    const contextValue = () => ({ items: items.map((item) => ({ ...item })) });
    const request = { documentKey: query, document, operationName: undefined, operation: getOperationAST(document)!, variableValues: undefined };
    return {
      repairs,
      compiled: async () => {
        const answer = await ops.execute({ ...request, contextValue: contextValue() });
        expect(ops.isCompiled(query, undefined)).toBe(true);
        return JSON.parse(JSON.stringify(answer)) as unknown;
      },
      interpreted: async () => JSON.parse(JSON.stringify(await execute({ schema: resolved, document, contextValue: contextValue() }))) as unknown,
    };
  };
  const query = '{ items { id name n f b color tags at } }';

  it('answers a query whose leaves came serialised as they came', async () => {
    const item = { id: 'a', name: 'x', n: 1, f: 2.5, b: true, color: 'GREEN', tags: ['t'], at: 'then' };
    const { repairs, compiled, interpreted } = execution(query, [item, { ...item, id: 'b' }]);
    const answer = await compiled();
    expect(answer).toEqual(await interpreted());
    expect(answer).toEqual({ data: { items: [item, { ...item, id: 'b' }] } });
    expect(repairs.count).toBe(0);
  });

  it('serialises the leaves that did not come serialised, running nothing again, and answers what graphql-js answers', async () => {
    const { repairs, compiled, interpreted } = execution(query, [{ id: 7, name: 8, n: '3', f: '2.5', b: 1, color: 'RED', tags: [1], at: 'then' }, { id: 'b', name: 'ok' }]);
    const before = resolverCalls;
    const answer = await compiled();
    expect(resolverCalls - before).toBe(1);
    expect(answer).toEqual(await interpreted());
    expect(answer).toEqual({ data: { items: [{ id: '7', name: '8', n: 3, f: 2.5, b: true, color: 'RED', tags: ['1'], at: 'then' }, { id: 'b', name: 'ok', n: null, f: null, b: null, color: null, tags: null, at: null }] } });
    expect(repairs.count).toBe(1);
  });

  it('answers a value its type refuses with null and the field error, nulling the nearest nullable place, as graphql-js does', async () => {
    const { compiled, interpreted } = execution('{ maybe { id name tags } }', [{ id: {} }, { id: 'ok', name: ['x'], tags: ['a', {}] }, { id: 'fine', tags: ['b'] }]);
    const answer = await compiled();
    expect(answer).toEqual(await interpreted());
    expect(answer).toMatchObject({
      data: { maybe: [null, { id: 'ok', name: null, tags: null }, { id: 'fine', name: null, tags: ['b'] }] },
      errors: [{ path: ['maybe', 0, 'id'] }, { path: ['maybe', 1, 'name'] }, { path: ['maybe', 1, 'tags', 1] }],
    });
  });
});
