import { describe, expect, it } from '@jest/globals';
import { getOperationAST, GraphQLError, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { CompiledOperations } from '../../src/platform/graphql/compiled-operations.js';

/** A schema whose `greeting` resolver counts its calls and whose `failing` field throws a plain Error. */
function harness() {
  let calls = 0;
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        greeting: { type: GraphQLString, args: { name: { type: GraphQLString } }, resolve: (_root, args: { name?: string }) => `hello ${args.name ?? 'you'} (${++calls})` },
        failing: { type: GraphQLString, resolve: () => Promise.reject(new Error('broken')) },
      },
    }),
  });
  const counts = { compiled: 0, interpreted: 0 };
  const series = (engine: keyof typeof counts) => ({ inc: () => void counts[engine]++ });
  const operations = (compileAfterSeen: number, maxCompiled = 10) =>
    new CompiledOperations(schema, { compileAfterSeen, maxCompiled, executions: { compiled: series('compiled'), interpreted: series('interpreted') } });
  const run = async (ops: CompiledOperations, text: string, variableValues?: Record<string, unknown>): Promise<ExecutionResult> => {
    const document = parse(text);
    return ops.execute({ documentKey: text, document, operationName: undefined, operation: getOperationAST(document)!, contextValue: {}, variableValues });
  };
  return { operations, run, counts, calls: () => calls };
}

describe('CompiledOperations', () => {
  it('runs an operation with graphql-js until its compileAfterSeen-th request, then compiled, with the same answer', async () => {
    const { operations, run, counts } = harness();
    const ops = operations(2);
    const query = '{ greeting(name: "ada") }';
    expect(await run(ops, query)).toEqual({ data: { greeting: 'hello ada (1)' } });
    expect(counts).toEqual({ compiled: 0, interpreted: 1 });
    expect(ops.isCompiled(query, undefined)).toBe(false);
    expect(await run(ops, query)).toEqual({ data: { greeting: 'hello ada (2)' } });
    expect(await run(ops, query)).toEqual({ data: { greeting: 'hello ada (3)' } });
    expect(counts).toEqual({ compiled: 2, interpreted: 1 });
    expect(ops.isCompiled(query, undefined)).toBe(true);
  });

  it('keeps at most maxCompiled operations, the least recently used going first', async () => {
    const { operations, run } = harness();
    const ops = operations(1, 2);
    const [a, b, c] = ['{ a: greeting }', '{ b: greeting }', '{ c: greeting }'];
    await run(ops, a);
    await run(ops, b);
    await run(ops, a);
    await run(ops, c);
    expect([a, b, c].map((query) => ops.isCompiled(query, undefined))).toEqual([true, false, true]);
  });

  it('keeps operations prepared at start (trusted documents) compiled whatever else comes', async () => {
    const { operations, run } = harness();
    const ops = operations(1, 1);
    const trusted = '{ trusted: greeting }';
    expect(ops.prepare(trusted, parse(trusted), undefined)).toBe(true);
    await run(ops, '{ a: greeting }');
    await run(ops, '{ b: greeting }');
    expect(ops.isCompiled(trusted, undefined)).toBe(true);
    expect(await run(ops, trusted)).toEqual({ data: { trusted: 'hello you (3)' } });
  });

  it('answers variables that do not coerce with graphql-js, which runs nothing either', async () => {
    const { operations, run, counts, calls } = harness();
    const ops = operations(1);
    const query = 'query ($name: String!) { greeting(name: $name) }';
    const compiled = await run(ops, query, { name: 7 });
    const interpreted = await run(operations(Number.POSITIVE_INFINITY), query, { name: 7 });
    expect(compiled).toEqual(interpreted);
    expect(compiled.errors?.[0]?.message).toBe('Variable "$name" got invalid value 7; String cannot represent a non string value: 7');
    expect(calls()).toBe(0);
    expect(counts).toEqual({ compiled: 0, interpreted: 2 });
  });

  it('makes resolver errors graphql-js errors: path, locations, the cause and extensions', async () => {
    const { operations, run } = harness();
    const compiled = await run(operations(1), '{ failing }');
    const interpreted = await run(operations(Number.POSITIVE_INFINITY), '{ failing }');
    expect(compiled.errors![0]).toBeInstanceOf(GraphQLError);
    expect(compiled.errors![0]!.extensions).toEqual({});
    expect(compiled.errors![0]!.originalError?.message).toBe('broken');
    expect(compiled.errors!.map((error) => error.toJSON())).toEqual(interpreted.errors!.map((error) => error.toJSON()));
    expect(compiled.data).toEqual(interpreted.data);
  });

  it('lets graphql-js run what graphql-jit cannot compile', async () => {
    const { operations, run, counts } = harness();
    const ops = operations(1);
    // No mutation type: graphql-jit refuses to compile, graphql-js answers with its own error.
    const result = await run(ops, 'mutation { greeting }');
    expect(result.errors?.[0]?.message).toBe('Schema is not configured to execute mutation operation.');
    expect(ops.isCompiled('mutation { greeting }', undefined)).toBe(false);
    expect(counts).toEqual({ compiled: 0, interpreted: 1 });
  });
});
