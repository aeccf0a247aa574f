import { describe, expect, it } from '@jest/globals';
import type { BookingEventView } from '../../src/modules/bookings/index.js';
import { AgentFanOut, FAN_OUT_SLICE } from '../../src/modules/booking-events/fan-out.js';
import type { SubscriberStream } from '../../src/modules/booking-events/subscriber-stream.js';

const event = (cursor: number) => ({ cursor: String(cursor) }) as BookingEventView;
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('AgentFanOut', () => {
  it('hands an event to one slice of whole connections at once and the rest within the same turn, events strictly in order', async () => {
    const fanOut = new AgentFanOut();
    const offers: { connection: number; cursor: string }[] = [];
    const received = new Map<object, string[]>();
    const connections = 25;
    const perConnection = 10;
    for (let connection = 0; connection < connections; connection++) {
      for (let i = 0; i < perConnection; i++) {
        const seen: string[] = [];
        const stream = { offer: (offered: BookingEventView) => (seen.push(offered.cursor), offers.push({ connection, cursor: offered.cursor })) };
        received.set(stream, seen);
        fanOut.add(stream as unknown as SubscriberStream, `ws-${connection}`);
      }
    }
    expect(fanOut.size).toBe(connections * perConnection);
    fanOut.deliver(event(1), 1n);
    fanOut.deliver(event(2), 2n);
    expect(offers).toHaveLength(FAN_OUT_SLICE); // the first slice only, so far
    // Whenever the first timer runs, every slice of both events has gone out: no timer or I/O between slices.
    const offeredByFirstTimer = new Promise<number>((resolve) => setTimeout(() => resolve(offers.length), 0));
    expect(await offeredByFirstTimer).toBe(2 * connections * perConnection);
    // Every e1 before any e2, and each connection's subscribers one after another.
    expect(offers.slice(0, connections * perConnection).every((offer) => offer.cursor === '1')).toBe(true);
    for (let at = 0; at < offers.length; at += perConnection) {
      expect(new Set(offers.slice(at, at + perConnection).map((offer) => offer.connection)).size).toBe(1);
    }
    for (const seen of received.values()) expect(seen).toEqual(['1', '2']);
  });

  it('hands an event only to those subscribed when it came, and forgets a subscriber that left', async () => {
    const fanOut = new AgentFanOut();
    const seen: string[] = [];
    const early = { offer: (offered: BookingEventView) => seen.push(`early ${offered.cursor}`) } as unknown as SubscriberStream;
    const late = { offer: (offered: BookingEventView) => seen.push(`late ${offered.cursor}`) } as unknown as SubscriberStream;
    fanOut.add(early, 'a');
    fanOut.deliver(event(1), 1n);
    fanOut.add(late, 'b');
    await turn();
    expect(fanOut.remove(early, 'a')).toBe(true);
    expect(fanOut.remove(early, 'a')).toBe(false);
    fanOut.deliver(event(2), 2n);
    await turn();
    expect(seen).toEqual(['early 1', 'late 2']);
    expect(fanOut.size).toBe(1);
  });
});
