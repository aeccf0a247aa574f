import { createSourceEventStream, execute, print, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';

/**
 * `subscribe` for graphql-ws in which subscribers that receive the same event object and ask the same
 * thing (document, operation, variables, credential) share one execution of it: a live event for
 * 1,000 subscribers of one agent is executed once, not 1,000 times. The source stream stays each
 * subscriber's own (their cursors, replay and filtering are untouched); only the mapping from event
 * to result is shared, keyed by the event object's identity, so an event read for one subscriber
 * alone is never shared with another.
 */
export async function subscribeSharingExecution(
  args: ExecutionArgs,
  viewerKey: (contextValue: unknown) => string,
): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  const key = `${viewerKey(args.contextValue)}\n${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}\n${printed(args.document)}`;
  return mapAsyncIterator(source, (event) => {
    if (event === null || typeof event !== 'object') return execute({ ...args, rootValue: event }) as Promise<ExecutionResult>;
    let byQuery = executions.get(event);
    if (!byQuery) executions.set(event, (byQuery = new Map()));
    let result = byQuery.get(key);
    if (!result) byQuery.set(key, (result = Promise.resolve(execute({ ...args, rootValue: event }))));
    return result;
  });
}

const executions = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();
const printedDocuments = new WeakMap<DocumentNode, string>();

function printed(document: DocumentNode): string {
  let text = printedDocuments.get(document);
  if (text === undefined) printedDocuments.set(document, (text = print(document)));
  return text;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] === 'function';
}

/** Maps each value of `source`; `return()` reaches the source at once (a generator would wait for its next value). */
function mapAsyncIterator<T, U>(source: AsyncIterable<T>, map: (value: T) => Promise<U>): AsyncGenerator<U> {
  const iterator = source[Symbol.asyncIterator]();
  // Promise chains, not async functions: every event passes here once per subscriber.
  const mapResult = (result: IteratorResult<T>): IteratorResult<U> | Promise<IteratorResult<U>> =>
    result.done ? { done: true, value: undefined } : map(result.value).then((value) => ({ done: false, value }));
  const mapped: AsyncGenerator<U> = {
    next: () => iterator.next().then(mapResult),
    return: async () => (iterator.return ? mapResult(await iterator.return()) : { done: true, value: undefined }),
    throw: async (error: unknown) => {
      if (iterator.throw) return mapResult(await iterator.throw(error));
      throw error;
    },
    [Symbol.asyncIterator]: () => mapped,
    [Symbol.asyncDispose]: async () => {
      await mapped.return(undefined);
    },
  };
  return mapped;
}
