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
  /** Runs one execution of an event in a unit of work of its own (an EntityManager fork); none when absent. */
  runInScope?: (<T>(operation: () => T) => T) | undefined;
}

/**
 * Where an event's execution starts: outside any request. A pushed event is handed over by whoever
 * wrote it (an HTTP request's code, after its commit) and must not run in that request's unit of work
 * or trace. One snapshot for the process, taken when nothing is active: a snapshot per subscription
 * (an AsyncResource and its bound function) was 0.7 KB of every idle subscription.
 */
const outsideAnyRequest = AsyncLocalStorage.snapshot();

/**
 * `subscribe` for graphql-ws in which subscribers that receive the same event object and ask the same
 * thing (document, operation, variables, credential) share one execution of it: a live event for
 * 1,000 subscribers of one agent is executed once, not 1,000 times. The source stream stays each
 * subscriber's own (their cursors, replay and filtering are untouched); only the mapping from event
 * to result is shared, keyed by the event object's identity, so an event read for one subscriber
 * alone is never shared with another. A source that can push (`PushingSource`) with a push target
 * sends its live events as the shared payload's JSON, serialised once per cohort. Each execution
 * runs in a unit of work of its own (`runInScope`), outside the request that wrote the event.
 */
export async function subscribeSharingExecution(args: ExecutionArgs, options: SharedExecutionOptions): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  const key = `${options.viewerKey(args.contextValue)}\n${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}\n${printed(args.document)}`;
  const pushesTo = options.pushTarget && isPushingSource(source) ? source : undefined;
  const pushed = pushesTo && options.pushTarget ? new PushedMessages(options.pushTarget) : undefined;
  const subscription = new SharedSubscription(source[Symbol.asyncIterator](), args, key, options.runInScope, pushed);
  const { payloadOf } = options;
  if (pushesTo && pushed) pushesTo.pushWhileWaiting((event) => pushed.add(payloadJsonOf(event, key, subscription, payloadOf)));
  return subscription;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * One subscriber's results: each value of its source mapped to the (shared) execution of it.
 * `return()` reaches the source at once (a generator would wait for its next value). With `pushed`,
 * the source's end waits until the pushed messages are sent; its failure and `return()` drop those
 * not yet sent. A class with its state in fields, not closures: 10,000 of them sit idle at once.
 */
class SharedSubscription implements AsyncGenerator<ExecutionResult, undefined, undefined> {
  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly args: ExecutionArgs,
    private readonly key: string,
    private readonly runInScope: (<T>(operation: () => T) => T) | undefined,
    private readonly pushed: PushedMessages | undefined,
  ) {}

  /** The execution of `event` for this subscriber's cohort: made once per event and cohort. */
  resultOf(event: unknown): ExecutionResult | Promise<ExecutionResult> {
    if (event === null || typeof event !== 'object') return this.execute(event);
    let byQuery = executions.get(event);
    if (!byQuery) executions.set(event, (byQuery = new Map()));
    const known = byQuery.get(this.key);
    if (known) return known;
    const result = this.execute(event);
    byQuery.set(this.key, result);
    if (isPromise(result)) {
      const cohorts = byQuery;
      const key = this.key;
      void result.then((settled) => cohorts.set(key, settled), () => undefined);
    }
    return result;
  }

  // Promise chains, not async functions: every event passes here once per subscriber.
  next(): Promise<IteratorResult<ExecutionResult, undefined>> {
    return this.source.next().then(
      (result) => this.mapped(result),
      (error: unknown) => {
        // A source that fails (a subscriber falling behind) resumes from its last cursor: what is still unsent is dropped.
        this.pushed?.close();
        return Promise.reject(error as Error);
      },
    );
  }

  async return(): Promise<IteratorResult<ExecutionResult, undefined>> {
    this.pushed?.close();
    return this.source.return ? this.mapped(await this.source.return()) : DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<ExecutionResult, undefined>> {
    if (this.source.throw) return this.mapped(await this.source.throw(error));
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  private mapped(result: IteratorResult<unknown>): IteratorResult<ExecutionResult, undefined> | Promise<IteratorResult<ExecutionResult, undefined>> {
    if (result.done) return this.pushed ? this.pushed.drained().then(() => DONE) : DONE;
    const value = this.resultOf(result.value);
    return isPromise(value) ? value.then((settled) => ({ done: false, value: settled })) : { done: false, value };
  }

  private execute(event: unknown): ExecutionResult | Promise<ExecutionResult> {
    const args = { ...this.args, rootValue: event };
    const runInScope = this.runInScope;
    return outsideAnyRequest(() => (runInScope ? runInScope(() => execute(args)) : execute(args)));
  }
}

/** The JSON of an event's payload for one cohort: made once, a promise only while its execution runs. */
function payloadJsonOf(event: unknown, key: string, subscription: SharedSubscription, payloadOf: (result: ExecutionResult) => object): string | Promise<string> {
  if (event === null || typeof event !== 'object') return jsonOf(subscription.resultOf(event), payloadOf);
  let byQuery = payloadJsons.get(event);
  if (!byQuery) payloadJsons.set(event, (byQuery = new Map()));
  const known = byQuery.get(key);
  if (known !== undefined) return known;
  const json = jsonOf(subscription.resultOf(event), payloadOf);
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
 * they are sent; after its failure or the client's `complete` nothing more is. A payload still being
 * executed (any field with arguments resolves through type-graphql's asynchronous argument check, so
 * every `bookingEvents` payload does) costs one promise reaction here, not an async function per
 * subscriber and event: those were the largest share of what the fan-out allocated (bench S10).
 */
class PushedMessages {
  /** The payload being waited for; what was pushed after it waits in `behind`. */
  private pending: Promise<string> | undefined;
  private behind: (string | Promise<string>)[] | undefined;
  private closed = false;
  /** Waiting for everything pushed to be sent (the source ended). */
  private drainedWaiters: (() => void)[] | undefined;

  constructor(private readonly target: PushTarget) {}

  add(payloadJson: string | Promise<string>): boolean {
    if (this.closed) return true;
    if (this.pending === undefined) {
      if (typeof payloadJson === 'string') return this.target.next(payloadJson);
      this.wait(payloadJson);
      return this.target.keepingUp();
    }
    if (1 + (this.behind?.length ?? 0) >= GRAPHQL_LIMITS.maxPushesAwaitingExecution) return false;
    (this.behind ??= []).push(payloadJson);
    return this.target.keepingUp();
  }

  /** Settles when everything pushed so far has been sent, or at once once closed. */
  drained(): Promise<void> {
    if (this.closed || this.pending === undefined) return Promise.resolve();
    return new Promise((resolve) => (this.drainedWaiters ??= []).push(resolve));
  }

  close(): void {
    this.closed = true;
    this.pending = undefined;
    this.behind = undefined;
    this.settleDrained();
  }

  // The payload promise never rejects: jsonOf answers a failed execution as an error payload.
  private wait(payloadJson: Promise<string>): void {
    this.pending = payloadJson;
    void payloadJson.then(this.sendSettled);
  }

  /** The pending payload is ready: it goes, then whatever waited behind it that is ready too. */
  private readonly sendSettled = (json: string): void => {
    if (this.closed) return;
    this.pending = undefined;
    // A connection that falls behind now is told so by the next push's answer.
    this.target.next(json);
    while (this.behind && this.behind.length > 0) {
      const next = this.behind.shift()!;
      if (typeof next !== 'string') {
        this.wait(next);
        return;
      }
      this.target.next(next);
    }
    this.behind = undefined;
    this.settleDrained();
  };

  private settleDrained(): void {
    const waiters = this.drainedWaiters;
    this.drainedWaiters = undefined;
    waiters?.forEach((resolve) => resolve());
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

function isPushingSource<T extends object>(value: T): value is T & PushingSource<unknown> {
  return typeof (value as Partial<PushingSource<unknown>>).pushWhileWaiting === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] === 'function';
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | null)?.then === 'function';
}
