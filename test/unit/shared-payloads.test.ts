import { describe, expect, it } from '@jest/globals';
import { sharedPayloadReplacer, withSharedPayload } from '../../src/platform/graphql/shared-payloads.js';

/** What graphql-ws does for every outgoing message: stringify with the replacer, then hand the string to the socket. */
const send = (message: object) => withSharedPayload(JSON.stringify(message, sharedPayloadReplacer));

describe('shared subscription payloads', () => {
  it('sends exactly what plain serialisation would, for every kind of message', () => {
    const messages = [
      { id: '1', type: 'next', payload: { data: { bookingEvents: { cursor: '7', note: 'shared-payload-placeholder "}' } } } },
      { id: '2', type: 'next', payload: { data: { a: 1 }, errors: [{ message: 'partly failed' }] } },
      { id: '3', type: 'next', payload: { data: { a: 1 }, extensions: { cost: 3 } } },
      { id: '4', type: 'error', payload: [{ message: 'bad' }] },
      { id: '5', type: 'complete' },
      { type: 'connection_ack' },
      { id: '6', type: 'next', payload: { data: { a: 1 } }, extra: 'kept' },
      { id: '7', type: 'next', payload: { data: null } },
    ];
    for (const message of messages) expect(send(message)).toBe(JSON.stringify(message));
  });

  it('serialises one result once however many subscribers receive it', () => {
    let reads = 0;
    const data = {
      get bookingEvents() {
        reads++;
        return { cursor: '9' };
      },
    };
    const sent = Array.from({ length: 100 }, (_, i) => send({ id: String(i), type: 'next', payload: { data } }));
    expect(reads).toBe(1);
    expect(sent.map((text) => JSON.parse(text) as unknown)).toEqual(
      Array.from({ length: 100 }, (_, i) => ({ id: String(i), type: 'next', payload: { data: { bookingEvents: { cursor: '9' } } } })),
    );
  });

  it('a payload set aside for a message that was never sent does not leak into the next one', () => {
    JSON.stringify({ id: '1', type: 'next', payload: { data: { a: 1 } } }, sharedPayloadReplacer); // socket already closed: not sent
    expect(send({ id: '2', type: 'complete' })).toBe('{"id":"2","type":"complete"}');
    expect(withSharedPayload('{"type":"pong"}')).toBe('{"type":"pong"}');
  });
});
