import { createSourceEventStream, execute, GraphQLError, print, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';

/**
 * A subscription source that can hand its live events over as they happen instead of waiting to be
 * pulled. graphql-ws pulls every event through a chain of promises and sends it with a write and a
 * callback of its own, about 10 µs per subscriber and event on the benchmark machine; pushed, a
 * subscriber's message is its id around the payload its cohort shares, added to its connection's
 * next write (connection-outbox.ts).
 */
export interface PushingSource<T> {
  /**
   * From now on, whenever the consumer waits in `next()` with nothing unread (so everything it
   * pulled has been sent), hand each new event to `push` instead of to `next()`. `push` answers
   * false when the connection is not taking what it is given; the source then ends with an error.
   */
  pushWhileWaiting(push: (event: T) => boolean): void;
}

/** Where a subscription's pushed results go: its `next` messages, made from the payload's JSON. */
export interface PushTarget {
  /** Sends a `next` message with this payload; false when the connection is not keeping up. */
  next(payloadJson: string): boolean;
}

export interface SharedExecutionOptions {
  /** Subscribers with the same key see the same data (their credential). */
  viewerKey: (contextValue: unknown) => string;
  /** The `next` payload of a result, as graphql-ws would send it (errors formatted). */
  payloadOf: (result: ExecutionResult) => object;
  /** The subscription's connection, when its events may be pushed. */
  pushTarget?: PushTarget | undefined;
}

/**
 * `subscribe` for graphql-ws in which subscribers that receive the same event object and ask the same
 * thing (document, operation, variables, credential) share one execution of it: a live event for
 * 1,000 subscribers of one agent is executed once, not 1,000 times. The source stream stays each
 * subscriber's own (their cursors, replay and filtering are untouched); only the mapping from event
 * to result is shared, keyed by the event object's identity, so an event read for one subscriber
 * alone is never shared with another. A source that can push (`PushingSource`) with a push target
 * sends its live events as the shared payload's JSON, serialised once per cohort.
 */
export async function subscribeSharingExecution(args: ExecutionArgs, options: SharedExecutionOptions): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  const key = `${options.viewerKey(args.contextValue)}\n${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}\n${printed(args.document)}`;
  const resultOf = (event: unknown): Promise<ExecutionResult> => {
    if (event === null || typeof event !== 'object') return Promise.resolve(execute({ ...args, rootValue: event }));
    let byQuery = executions.get(event);
    if (!byQuery) executions.set(event, (byQuery = new Map()));
    let result = byQuery.get(key);
    if (!result) byQuery.set(key, (result = Promise.resolve(execute({ ...args, rootValue: event }))));
    return result;
  };
  if (options.pushTarget && isPushingSource(source)) {
    const pushed = new PushedMessages(options.pushTarget);
    source.pushWhileWaiting((event) => pushed.add(payloadJsonOf(event, key, () => resultOf(event), options.payloadOf)));
  }
  return mapAsyncIterator(source, resultOf);
}

/** The JSON of an event's payload for one cohort: a string once made, a promise while its execution runs. */
function payloadJsonOf(event: unknown, key: string, result: () => Promise<ExecutionResult>, payloadOf: (result: ExecutionResult) => object): string | Promise<string> {
  if (event === null || typeof event !== 'object') return jsonOf(result(), payloadOf);
  let byQuery = payloadJsons.get(event);
  if (!byQuery) payloadJsons.set(event, (byQuery = new Map()));
  const known = byQuery.get(key);
  if (known !== undefined) return known;
  const json = jsonOf(result(), payloadOf);
  byQuery.set(key, json);
  void json.then((text) => byQuery.set(key, text));
  return json;
}

function jsonOf(result: Promise<ExecutionResult>, payloadOf: (result: ExecutionResult) => object): Promise<string> {
  return result.then(
    (value) => JSON.stringify(payloadOf(value)),
    (error: unknown) => JSON.stringify(payloadOf({ errors: [error instanceof GraphQLError ? error : new GraphQLError(String(error))] })),
  );
}

/** One subscription's pushed payloads, sent in the order they were pushed, also while some are still being executed. */
class PushedMessages {
  private readonly waiting: (string | Promise<string>)[] = [];
  /** What the connection answered last. */
  private keepingUp = true;

  constructor(private readonly target: PushTarget) {}

  add(payloadJson: string | Promise<string>): boolean {
    if (this.waiting.length === 0 && typeof payloadJson === 'string') return (this.keepingUp = this.target.next(payloadJson));
    this.waiting.push(payloadJson);
    if (this.waiting.length === 1) void this.sendInOrder();
    return this.keepingUp;
  }

  private async sendInOrder(): Promise<void> {
    while (this.waiting.length > 0) {
      const json = await this.waiting[0]!;
      this.waiting.shift();
      this.keepingUp = this.target.next(json);
    }
  }
}

const payloadJsons = new WeakMap<object, Map<string, string | Promise<string>>>();
const executions = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();
const printedDocuments = new WeakMap<DocumentNode, string>();

function printed(document: DocumentNode): string {
  let text = printedDocuments.get(document);
  if (text === undefined) printedDocuments.set(document, (text = print(document)));
  return text;
}

function isPushingSource(value: object): value is PushingSource<unknown> {
  return typeof (value as Partial<PushingSource<unknown>>).pushWhileWaiting === 'function';
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
