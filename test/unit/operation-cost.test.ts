import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { buildSchema, getNamedType, getNullableType, getOperationAST, isCompositeType, isListType, isObjectType, parse } from 'graphql';
import { resolverClasses } from '../../src/modules/index.js';
import { actualCost, estimateCost, MUTATION_ROOT_WEIGHT } from '../../src/platform/graphql/operation-cost.js';
import { buildGatewaySchema } from '../../src/platform/graphql/schema.js';
import { MAX_BOOLEAN_VARIABLES, costOverConditions } from '../../src/platform/graphql/cost-over-conditions.js';

const schema = buildSchema(`
  directive @cost(weight: String!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
  directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
  type Query {
    bookings(first: Int = 50): BookingConnection! @listSize(slicingArguments: ["first"], sizedFields: ["edges"], requireOneSlicingArgument: false)
    slots(limit: Int): [Slot!]! @listSize(slicingArguments: ["limit"], assumedSize: 7)
    prices: [Price!]! @listSize(assumedSize: 56)
    search(text: String @cost(weight: "5")): Int
    heavy: Slot @cost(weight: "20")
  }
  type Mutation { book(at: String): Booking }
  type BookingConnection { edges: [Edge!]! pageInfo: PageInfo! }
  type Edge { cursor: String! node: Booking! }
  type Booking { id: ID! agent: Agent! tags: [String!]! }
  type Agent { id: ID! name: String! }
  type PageInfo { hasNextPage: Boolean! }
  type Slot { startsAt: String! }
  type Price @cost(weight: "2") { slug: String! }
`);

const estimate = (query: string, variables?: Record<string, unknown>) => estimateCost(schema, parse(query), undefined, variables);
const actual = (query: string, data: unknown, variables?: Record<string, unknown>) => {
  const document = parse(query);
  return actualCost(schema, document, getOperationAST(document)!, variables, data);
};

describe('estimateCost (IBM cost directives)', () => {
  it('counts objects 1 and leaves 0, and multiplies a connection’s edges by its slicing argument', () => {
    // bookings 1 + first × (edge 1 + node 1 + agent 1) + pageInfo 1
    expect(estimate('{ bookings(first: 10) { edges { node { id agent { name } } } pageInfo { hasNextPage } } }')).toBe(1 + 10 * 3 + 1);
    // The argument's default when none is sent, and a variable's value when one is.
    expect(estimate('{ bookings { edges { node { id } } } }')).toBe(1 + 50 * 2);
    expect(estimate('query ($n: Int) { bookings(first: $n) { edges { cursor } } }', { n: 3 })).toBe(1 + 3);
    // Through a fragment too.
    expect(estimate('{ bookings(first: 4) { ...E } } fragment E on BookingConnection { edges { node { id } } }')).toBe(1 + 4 * 2);
  });

  it('takes the assumed size without a slicing argument, and weights from @cost on fields, types and arguments', () => {
    expect(estimate('{ slots { startsAt } }')).toBe(7);
    expect(estimate('{ slots(limit: 2) { startsAt } }')).toBe(2);
    expect(estimate('{ prices { slug } }')).toBe(56 * 2);
    expect(estimate('{ search }')).toBe(0);
    expect(estimate('{ search(text: "x") }')).toBe(5);
    expect(estimate('{ heavy { startsAt } }')).toBe(20);
  });

  it('weights a mutation root field 10, and leaves out what @skip or @include drop', () => {
    expect(estimate('mutation { book { id } }')).toBe(MUTATION_ROOT_WEIGHT);
    expect(estimate('query ($no: Boolean!) { prices @include(if: $no) { slug } slots(limit: 1) { startsAt } }', { no: false })).toBe(1);
  });
});

describe('actualCost (what the answer holds)', () => {
  it('counts the lists as they came', () => {
    const query = '{ bookings(first: 10) { edges { node { id agent { name } } } pageInfo { hasNextPage } } }';
    const edge = { node: { id: '1', agent: { name: 'a' } } };
    expect(actual(query, { bookings: { edges: [edge, edge], pageInfo: { hasNextPage: false } } })).toBe(1 + 2 * 3 + 1);
    expect(actual(query, { bookings: { edges: [], pageInfo: { hasNextPage: false } } })).toBe(2);
    expect(actual('{ prices { slug } heavy { startsAt } }', { prices: [{ slug: 'a' }], heavy: null })).toBe(2);
    expect(actual('{ b: prices { slug } }', { b: [{ slug: 'a' }, { slug: 'b' }] })).toBe(4);
    expect(actual('mutation { book { id } }', { book: { id: '1' } })).toBe(MUTATION_ROOT_WEIGHT);
  });

  it('counts a leaf its weight when it came (an argument’s @cost), and nothing for one that weighs nothing or came null', () => {
    expect(actual('{ search(text: "x") }', { search: 3 })).toBe(5);
    expect(actual('{ search(text: "x") }', { search: null })).toBe(0);
    expect(actual('{ search }', { search: 3 })).toBe(0);
    expect(actual('{ s: search(text: "x") t: search }', { s: 1, t: 2 })).toBe(5);
  });

  it('walks one document answer after answer (its plan kept), and an operation with variables by the variables each answer was sent', () => {
    // A cached document is the same object on every request: its walk is kept, the answers still differ.
    const fixed = parse('{ bookings(first: 10) { edges { node { id agent { name } } } } prices @include(if: true) { slug } }');
    const operation = getOperationAST(fixed)!;
    const edge = { node: { id: '1', agent: { name: 'a' } } };
    expect(actualCost(schema, fixed, operation, undefined, { bookings: { edges: [edge, edge, edge] }, prices: [] })).toBe(1 + 3 * 3);
    expect(actualCost(schema, fixed, operation, undefined, { bookings: { edges: [edge] }, prices: [{ slug: 'a' }] })).toBe(1 + 3 + 2);
    // Which fields count depends on the variables: the same document, sent with other values.
    const varying = parse('query ($with: Boolean!) { prices @include(if: $with) { slug } slots { startsAt } }');
    const data = { prices: [{ slug: 'a' }, { slug: 'b' }], slots: [] };
    expect(actualCost(schema, varying, getOperationAST(varying)!, { with: true }, data)).toBe(4);
    expect(actualCost(schema, varying, getOperationAST(varying)!, { with: false }, data)).toBe(0);
    expect(actualCost(schema, varying, getOperationAST(varying)!, { with: true }, data)).toBe(4);
  });
});

describe('the gateway schema', () => {
  it('sizes every list of objects: @listSize on the field, or a connection’s sizedFields', async () => {
    const gateway = await buildGatewaySchema({ resolvers: resolverClasses });
    const sized = new Set<string>();
    const lists: string[] = [];
    for (const type of Object.values(gateway.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const directive = field.astNode?.directives?.find((node) => node.name.value === 'listSize');
        const sizedFields = directive?.arguments?.find((argument) => argument.name.value === 'sizedFields')?.value;
        if (sizedFields?.kind === 'ListValue') for (const name of sizedFields.values) if (name.kind === 'StringValue') sized.add(`${getNamedType(field.type).name}.${name.value}`);
        if (isListType(getNullableType(field.type)) && isCompositeType(getNamedType(field.type)) && !directive) lists.push(`${type.name}.${field.name}`);
      }
    }
    expect(lists.filter((list) => !sized.has(list))).toEqual([]);
    expect(lists.length).toBeGreaterThan(0);
  });
});

describe('costOverConditions (the pages’ documents, reported by npm run graphql:costs)', () => {
  const worst = (query: string) => {
    const document = parse(query);
    return costOverConditions(schema, document, getOperationAST(document)!);
  };

  it('counts what @include(if: $v) adds when $v is true and what @skip(if: $v) adds when it is false', () => {
    expect(worst('query ($full: Boolean!) { slots(limit: 1) { startsAt } prices @include(if: $full) { slug } }')).toBe(1 + 56 * 2);
    expect(worst('query ($brief: Boolean!) { slots(limit: 1) { startsAt } prices @skip(if: $brief) { slug } }')).toBe(1 + 56 * 2);
    // Two variables that exclude each other's subtree: the worst is the larger side, never both.
    expect(worst('query ($a: Boolean!) { prices @include(if: $a) { slug } slots(limit: 3) @skip(if: $a) { startsAt } }')).toBe(56 * 2);
    // A default is a value the caller may replace.
    expect(worst('query ($full: Boolean = false) { prices @include(if: $full) { slug } }')).toBe(56 * 2);
  });

  it('fills the other required variables with placeholders, and sizes lists by their defaults', () => {
    expect(worst('query ($text: String!) { search(text: $text) bookings { edges { node { id } } } }')).toBe(5 + 1 + 50 * 2);
  });

  it(`refuses more than ${MAX_BOOLEAN_VARIABLES} Boolean variables instead of trying 2^n combinations`, () => {
    const declare = (n: number) => Array.from({ length: n }, (_, i) => `$b${i}: Boolean!`).join(' ');
    const use = (n: number) => Array.from({ length: n }, (_, i) => `s${i}: slots(limit: 1) @include(if: $b${i}) { startsAt }`).join(' ');
    expect(worst(`query (${declare(MAX_BOOLEAN_VARIABLES)}) { ${use(MAX_BOOLEAN_VARIABLES)} }`)).toBe(MAX_BOOLEAN_VARIABLES);
    expect(() => worst(`query (${declare(MAX_BOOLEAN_VARIABLES + 1)}) { ${use(MAX_BOOLEAN_VARIABLES + 1)} }`)).toThrow(/11 Boolean variables/);
  });
});
