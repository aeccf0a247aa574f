import { AsyncLocalStorage } from 'node:async_hooks';
import { createSourceEventStream, execute, GraphQLError, print, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { GRAPHQL_LIMITS } from './limits.js';

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
  /** Whether the connection is keeping up now. */
  keepingUp(): boolean;
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
  // Pushed events are handed over by whoever wrote them; their execution runs in this subscription's scope.
  const inSubscriptionScope = AsyncLocalStorage.snapshot();
  const resultOf = (event: unknown): ExecutionResult | Promise<ExecutionResult> => {
    if (event === null || typeof event !== 'object') return inSubscriptionScope(() => execute({ ...args, rootValue: event }));
    let byQuery = executions.get(event);
    if (!byQuery) executions.set(event, (byQuery = new Map()));
    let result = byQuery.get(key);
    if (!result) {
      result = inSubscriptionScope(() => execute({ ...args, rootValue: event }));
      byQuery.set(key, result);
      if (isPromise(result)) void result.then((settled) => byQuery.set(key, settled), () => undefined);
    }
    return result;
  };
  if (!options.pushTarget || !isPushingSource(source)) return mapAsyncIterator(source, resultOf);
  const pushed = new PushedMessages(options.pushTarget);
  source.pushWhileWaiting((event) => pushed.add(payloadJsonOf(event, key, () => resultOf(event), options.payloadOf)));
  return mapAsyncIterator(source, resultOf, pushed);
}

/** The JSON of an event's payload for one cohort: made once, a promise only while its execution runs. */
function payloadJsonOf(event: unknown, key: string, result: () => ExecutionResult | Promise<ExecutionResult>, payloadOf: (result: ExecutionResult) => object): string | Promise<string> {
  if (event === null || typeof event !== 'object') return jsonOf(result(), payloadOf);
  let byQuery = payloadJsons.get(event);
  if (!byQuery) payloadJsons.set(event, (byQuery = new Map()));
  const known = byQuery.get(key);
  if (known !== undefined) return known;
  const json = jsonOf(result(), payloadOf);
  byQuery.set(key, json);
  if (isPromise(json)) void json.then((text) => byQuery.set(key, text));
  return json;
}

function jsonOf(result: ExecutionResult | Promise<ExecutionResult>, payloadOf: (result: ExecutionResult) => object): string | Promise<string> {
  const failed = (error: unknown) => JSON.stringify(payloadOf({ errors: [error instanceof GraphQLError ? error : new GraphQLError(String(error))] }));
  if (isPromise(result)) return result.then((settled) => JSON.stringify(payloadOf(settled))).catch(failed);
  try {
    return JSON.stringify(payloadOf(result));
  } catch (error) {
    return failed(error);
  }
}

/**
 * One subscription's pushed payloads, sent in the order they were pushed, also while some are still
 * being executed (at most `maxPushesAwaitingExecution` of them). The subscription's end waits until
 * they are sent; after its failure or the client's `complete` nothing more is.
 */
class PushedMessages {
  private readonly queued: Promise<string>[] = [];
  private sending: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly target: PushTarget) {}

  add(payloadJson: string | Promise<string>): boolean {
    if (this.closed) return true;
    if (!this.sending && typeof payloadJson === 'string') return this.target.next(payloadJson);
    if (this.queued.length >= GRAPHQL_LIMITS.maxPushesAwaitingExecution) return false;
    this.queued.push(Promise.resolve(payloadJson));
    this.sending ??= this.sendQueued();
    return this.target.keepingUp();
  }

  /** Settles when everything pushed so far has been sent, or at once once closed. */
  drained(): Promise<void> {
    return this.closed ? Promise.resolve() : (this.sending ?? Promise.resolve());
  }

  close(): void {
    this.closed = true;
    this.queued.length = 0;
  }

  private async sendQueued(): Promise<void> {
    try {
      while (this.queued.length > 0) {
        const json = await this.queued[0]!;
        if (this.closed) return;
        this.queued.shift();
        // A connection that falls behind now is told so by the next push's answer.
        this.target.next(json);
      }
    } finally {
      this.sending = undefined;
    }
  }
}

const payloadJsons = new WeakMap<object, Map<string, string | Promise<string>>>();
const executions = new WeakMap<object, Map<string, ExecutionResult | Promise<ExecutionResult>>>();
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

/**
 * Maps each value of `source`; `return()` reaches the source at once (a generator would wait for its
 * next value). With `pushed`, the source's end waits until the pushed messages are sent; its failure
 * and `return()` drop those not yet sent.
 */
function mapAsyncIterator<T, U>(source: AsyncIterable<T>, map: (value: T) => U | Promise<U>, pushed?: PushedMessages): AsyncGenerator<U> {
  const iterator = source[Symbol.asyncIterator]();
  const done: IteratorReturnResult<undefined> = { done: true, value: undefined };
  // Promise chains, not async functions: every event passes here once per subscriber.
  const mapResult = (result: IteratorResult<T>): IteratorResult<U> | Promise<IteratorResult<U>> => {
    if (result.done) return pushed ? pushed.drained().then(() => done) : done;
    const value = map(result.value);
    return isPromise(value) ? value.then((mapped) => ({ done: false, value: mapped })) : { done: false, value };
  };
  // A source that fails (a subscriber falling behind) resumes from its last cursor: what is still unsent is dropped.
  const failed = (error: unknown): Promise<never> => {
    pushed?.close();
    return Promise.reject(error);
  };
  const mapped: AsyncGenerator<U> = {
    next: () => iterator.next().then(mapResult, failed),
    return: async () => {
      pushed?.close();
      return iterator.return ? mapResult(await iterator.return()) : done;
    },
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

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | null)?.then === 'function';
}
