import { describe, expect, it } from '@jest/globals';
import { EventEmitter, on } from 'node:events';
import { buildSchema, parse, type ExecutionResult } from 'graphql';
import { subscribeSharingExecution } from '../../src/platform/graphql/shared-execution.js';

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
