import { describe, expect, it } from '@jest/globals';
import type { BookingEventView } from '../../src/modules/bookings/index.js';
import { MAX_UNREAD_EVENTS, SubscriberStream, type Replay } from '../../src/modules/booking-events/subscriber-stream.js';

const event = (cursor: number) => ({ cursor: String(cursor) }) as BookingEventView;
const offer = (stream: SubscriberStream, cursor: number) => stream.offer(event(cursor), BigInt(cursor));
const cursors = async (stream: SubscriberStream, count: number) => {
  const seen: string[] = [];
  for (let i = 0; i < count; i++) {
    const result = await stream.next();
    if (result.done) break;
    seen.push(result.value.cursor);
  }
  return seen;
};

/** A replay that starts at `from` and yields the given cursors from the "log". */
const replayOf = (from: number, logged: number[]): Replay =>
  async function* (setLast) {
    setLast(BigInt(from));
    for (const cursor of logged) yield event(cursor);
  };

describe('SubscriberStream', () => {
  it('hands out the replay, then live events, each once and in order', async () => {
    let ended = 0;
    const stream = new SubscriberStream(replayOf(3, [4, 5, 6]), () => ended++);
    offer(stream, 5); // arrived live while the log was read: a duplicate
    offer(stream, 7);
    expect(await cursors(stream, 4)).toEqual(['4', '5', '6', '7']);
    const waiting = stream.next();
    offer(stream, 7);
    offer(stream, 8);
    expect((await waiting).value).toEqual(event(8));
    await stream.return();
    await stream.return();
    expect(ended).toBe(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it(`keeps ${MAX_UNREAD_EVENTS} unread events, and ends a subscriber that leaves one more unread`, async () => {
    /** A stream past its (empty) replay that has handed out cursor 1: what it is offered now waits unread. */
    const live = async () => {
      const stream = new SubscriberStream(replayOf(0, []), () => undefined);
      const first = stream.next();
      await new Promise((resolve) => setImmediate(resolve));
      offer(stream, 1);
      expect((await first).value).toEqual(event(1));
      return stream;
    };
    const [patient, lagging] = [await live(), await live()];
    for (let cursor = 2; cursor < MAX_UNREAD_EVENTS + 2; cursor++) offer(patient, cursor);
    for (let cursor = 2; cursor < MAX_UNREAD_EVENTS + 3; cursor++) offer(lagging, cursor);
    const delivered = await cursors(patient, MAX_UNREAD_EVENTS);
    expect(delivered).toHaveLength(MAX_UNREAD_EVENTS);
    expect(delivered.at(-1)).toBe(String(MAX_UNREAD_EVENTS + 1));
    await expect(lagging.next()).rejects.toMatchObject({ code: 'subscriber_lagging' });
  });

  it('pushes live events while its consumer waits, queues the rest for next(), and ends when the connection falls behind', async () => {
    const stream = new SubscriberStream(replayOf(3, [4, 5]), () => undefined);
    const pushed: string[] = [];
    let keepingUp = true;
    stream.pushWhileWaiting((pushedEvent) => {
      pushed.push(pushedEvent.cursor);
      return keepingUp;
    });
    offer(stream, 6); // during the replay: for next(), after the replayed events
    expect(await cursors(stream, 3)).toEqual(['4', '5', '6']);
    offer(stream, 7); // nobody waits yet (the last event may still be being sent): for next()
    expect(pushed).toEqual([]);
    expect((await stream.next()).value).toEqual(event(7));
    const waiting = stream.next();
    offer(stream, 7); // already handed out
    offer(stream, 8);
    offer(stream, 9);
    expect(pushed).toEqual(['8', '9']);
    keepingUp = false;
    offer(stream, 10);
    expect(pushed).toEqual(['8', '9', '10']);
    await expect(waiting).rejects.toMatchObject({ code: 'subscriber_lagging' });
    offer(stream, 11);
    expect(pushed).toEqual(['8', '9', '10']);
  });

  it('ends at once while it waits, and when the bus closes', async () => {
    const stream = new SubscriberStream(replayOf(0, []), () => undefined);
    const waiting = stream.next();
    stream.end();
    expect(await waiting).toEqual({ done: true, value: undefined });
    offer(stream, 1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });
});
