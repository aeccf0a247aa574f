import { describe, expect, it } from '@jest/globals';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter, on } from 'node:events';
import { buildSchema, parse, type ExecutionResult } from 'graphql';
import { GRAPHQL_LIMITS } from '../../src/platform/graphql/limits.js';
import { subscribeSharingExecution, type PushTarget } from '../../src/platform/graphql/shared-execution.js';
import { SubscriberStream } from '../../src/modules/booking-events/subscriber-stream.js';

/** A schema whose subscription streams whatever the emitter sends and counts how often `label` runs. */
function harness() {
  const schema = buildSchema(`
    type Query { ok: Boolean }
    type Event { id: ID!, label: String! }
    type Subscription { events: Event! }
  `);
  const emitter = new EventEmitter();
  let executions = 0;
  const rootValue = {
    events: () => {
      const stream = on(emitter, 'event');
      return (async function* () {
        for await (const [payload] of stream) yield payload;
      })();
    },
  };
  // The same payload object reaches every subscriber, as the booking event bus hands out one object.
  const event = (id: string) => ({ events: { id, label: () => `${id} (${++executions})` } });
  const subscribe = async (query: string, token = 'a', variableValues = {}) =>
    (await subscribeSharingExecution(
      { schema, document: parse(query), rootValue, contextValue: { token }, variableValues },
      { viewerKey: (context) => (context as { token: string }).token, payloadOf: (result) => result },
    )) as AsyncGenerator<ExecutionResult>;
  return { emitter, subscribe, event, executions: () => executions };
}

describe('subscribeSharingExecution', () => {
  it('executes one event once for subscribers with the same document, variables and credential', async () => {
    const h = harness();
    const streams = await Promise.all(Array.from({ length: 5 }, () => h.subscribe('subscription { events { id label } }')));
    const results = streams.map((stream) => stream.next());
    h.emitter.emit('event', h.event('e1'));
    const values = (await Promise.all(results)).map((result) => result.value as ExecutionResult);
    expect(values.map((value) => value.data)).toEqual(Array(5).fill({ events: { id: 'e1', label: 'e1 (1)' } }));
    expect(h.executions()).toBe(1);
    await Promise.all(streams.map((stream) => stream.return(undefined)));
  });

  it('executes separately for another credential, another document or another event', async () => {
    const h = harness();
    const [a, b, c] = await Promise.all([
      h.subscribe('subscription { events { id label } }', 'a'),
      h.subscribe('subscription { events { id label } }', 'b'),
      h.subscribe('subscription { events { label } }', 'a'),
    ]);
    const first = [a!.next(), b!.next(), c!.next()];
    h.emitter.emit('event', h.event('e1'));
    await Promise.all(first);
    expect(h.executions()).toBe(3);
    const second = [a!.next(), b!.next(), c!.next()];
    h.emitter.emit('event', h.event('e2'));
    await Promise.all(second);
    expect(h.executions()).toBe(6);
    await Promise.all([a!.return(undefined), b!.return(undefined), c!.return(undefined)]);
  });
});

/** Subscribers whose source can push (the booking event stream), each with a target recording its messages. */
function pushHarness() {
  const schema = buildSchema(`
    type Query { ok: Boolean }
    type Event { id: ID!, label: String!, slow: String!, never: String!, broken: String }
    type Subscription { events: Event! }
  `);
  let executions = 0;
  const streams: SubscriberStream[] = [];
  const rootValue = {
    events: () => {
      // No replay: the stream goes live at once.
      const replay = async function* (setLast: (cursor: bigint) => void): AsyncGenerator<never, void, undefined> {
        setLast(0n);
        yield* [];
      };
      const stream = new SubscriberStream(replay, () => undefined);
      streams.push(stream);
      return stream;
    },
  };
  const event = (id: string) => ({
    events: {
      id,
      label: () => `${id} (${++executions})`,
      slow: () => new Promise((resolve) => setTimeout(() => resolve(`${id} slowly`), 5)),
      never: () => new Promise(() => undefined),
      broken: () => {
        throw new Error('no label today');
      },
    },
  });
  const subscribe = async (query: string, log: string[], connection = { keepingUp: true }) => {
    const target: PushTarget = {
      next: (payloadJson) => {
        log.push(payloadJson);
        return connection.keepingUp;
      },
      keepingUp: () => connection.keepingUp,
    };
    const stream = (await subscribeSharingExecution(
      { schema, document: parse(query), rootValue, contextValue: { token: 'a' } },
      {
        viewerKey: (context) => (context as { token: string }).token,
        payloadOf: (result) => (result.errors ? { data: result.data, errors: result.errors.map((error) => ({ message: `formatted: ${error.message}` })) } : result),
        pushTarget: target,
      },
    )) as AsyncGenerator<ExecutionResult>;
    return stream;
  };
  const offer = (id: string, cursor: number) => {
    const shared = event(id);
    for (const stream of streams) stream.offer(shared as never, BigInt(cursor));
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  const endAll = () => streams.forEach((stream) => stream.end());
  return { subscribe, offer, settle, endAll, executions: () => executions };
}

describe('subscribeSharingExecution with a pushing source', () => {
  it('pushes one execution, serialised once, to every waiting subscriber of a cohort, at once', async () => {
    const h = pushHarness();
    const logs = [[], [], []] as string[][];
    const streams = await Promise.all(logs.map((log) => h.subscribe('subscription { events { id label broken } }', log)));
    const waiting = streams.map((stream) => stream.next());
    await h.settle(); // past the (empty) replay: each waits for a live event
    h.offer('e1', 1);
    const expected = JSON.stringify({ data: { events: { id: 'e1', label: 'e1 (1)', broken: null } }, errors: [{ message: 'formatted: no label today' }] });
    expect(logs).toEqual([[expected], [expected], [expected]]);
    expect(h.executions()).toBe(1);
    await Promise.all(streams.map((stream) => stream.return(undefined)));
    expect(await Promise.all(waiting)).toEqual(Array(3).fill({ done: true, value: undefined }));
  });

  it('sends what was pushed before the subscription ends, while its execution is slow, and nothing after the client completes', async () => {
    const h = pushHarness();
    const order: string[] = [];
    const ending = await h.subscribe('subscription { events { slow } }', order);
    const completedLog: string[] = [];
    const completing = await h.subscribe('subscription { events { id slow } }', completedLog);
    const end = ending.next().then((result) => order.push(result.done ? 'end' : 'an event through next()'));
    void completing.next();
    await h.settle();
    h.offer('e1', 1);
    expect(order).toEqual([]); // e1 is still being executed
    await completing.return(undefined); // this client completes first
    h.endAll(); // the bus closes (shutdown): the sources end while e1 is executed
    await end;
    expect(order).toEqual([JSON.stringify({ data: { events: { slow: 'e1 slowly' } } }), 'end']);
    await h.settle();
    expect(completedLog).toEqual([]);
  });

  it(`ends a subscription once ${GRAPHQL_LIMITS.maxPushesAwaitingExecution} pushes wait for their execution and one more comes, without waiting for them`, async () => {
    const h = pushHarness();
    const log: string[] = [];
    const stream = await h.subscribe('subscription { events { never } }', log);
    let outcome: unknown = 'live';
    const next = stream.next().then(
      () => (outcome = 'ended'),
      (error: unknown) => (outcome = error),
    );
    await h.settle();
    for (let cursor = 1; cursor <= GRAPHQL_LIMITS.maxPushesAwaitingExecution; cursor++) h.offer(`e${cursor}`, cursor);
    await h.settle();
    expect(outcome).toBe('live'); // just at the bound
    h.offer('one more', GRAPHQL_LIMITS.maxPushesAwaitingExecution + 1);
    await next;
    expect(outcome).toMatchObject({ code: 'subscriber_lagging' });
    expect(log).toEqual([]);
  });
});

describe('subscribeSharingExecution and units of work', () => {
  it('runs each execution of an event in a unit of work of its own, outside the request that wrote the event', async () => {
    const schema = buildSchema(`
      type Query { ok: Boolean }
      type Event { id: ID!, seenIn: String! }
      type Subscription { events: Event! }
    `);
    const request = new AsyncLocalStorage<string>();
    const unitOfWork = new AsyncLocalStorage<number>();
    let units = 0;
    const runInScope = <T>(operation: () => T): T => unitOfWork.run(++units, operation);
    const streams: SubscriberStream[] = [];
    const rootValue = {
      events: () => {
        const stream = new SubscriberStream(async function* (setLast) {
          setLast(0n);
          yield* [];
        }, () => undefined);
        streams.push(stream);
        return stream;
      },
    };
    const event = (id: string) => ({ events: { id, seenIn: () => `request ${request.getStore() ?? 'none'}, unit ${unitOfWork.getStore() ?? 'none'}` } });
    const log: string[] = [];
    const subscribe = (token: string) =>
      request.run(`subscribe ${token}`, () =>
        subscribeSharingExecution(
          { schema, document: parse('subscription { events { id seenIn } }'), rootValue, contextValue: { token } },
          {
            viewerKey: (context) => (context as { token: string }).token,
            payloadOf: (result) => result,
            pushTarget: { next: (json) => log.push(json) > 0, keepingUp: () => true },
            runInScope,
          },
        ),
      ) as Promise<AsyncGenerator<ExecutionResult>>;
    const subscriptions = await Promise.all([subscribe('a'), subscribe('a'), subscribe('b')]);
    subscriptions.forEach((subscription) => void subscription.next());
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const [id, cursor] of [['e1', 1n], ['e2', 2n]] as const) {
      const shared = event(id);
      // A write announces its events from its own request, after its commit.
      request.run('POST /api/bookings', () => streams.forEach((stream) => stream.offer(shared as never, cursor)));
    }
    expect(log.map((json) => (JSON.parse(json) as { data: { events: { id: string; seenIn: string } } }).data.events)).toEqual([
      { id: 'e1', seenIn: 'request none, unit 1' },
      { id: 'e1', seenIn: 'request none, unit 1' },
      { id: 'e1', seenIn: 'request none, unit 2' },
      { id: 'e2', seenIn: 'request none, unit 3' },
      { id: 'e2', seenIn: 'request none, unit 3' },
      { id: 'e2', seenIn: 'request none, unit 4' },
    ]);
    await Promise.all(subscriptions.map((subscription) => subscription.return(undefined)));
  });
});
