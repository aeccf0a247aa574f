import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { BookingEventsDocument, type BookingEventsSubscription } from '../generated/graphql.js';

type BookingEvent = BookingEventsSubscription['bookingEvents'];

/** A live `bookingEvents` subscription over a real graphql-ws connection. */
export function subscribeToBookingEvents(url: string, token: string, after?: string) {
  const events: BookingEvent[] = [];
  const errors: unknown[] = [];
  let acknowledged!: () => void;
  const ready = new Promise<void>((resolve) => (acknowledged = resolve));
  const client: Client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    on: { connected: () => acknowledged() },
  });
  const stop = client.subscribe<BookingEventsSubscription>(
    { query: print(BookingEventsDocument), variables: after ? { after } : {} },
    {
      next: (value) => (value.data ? events.push(value.data.bookingEvents) : errors.push(value.errors)),
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  return {
    events,
    errors,
    ready,
    async waitFor(count: number, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count) {
        if (errors.length) throw new Error(`subscription failed: ${JSON.stringify(errors)}`);
        if (Date.now() > deadline) throw new Error(`got ${events.length} of ${count} events`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return events;
    },
    async close() {
      stop();
      await client.dispose();
    },
  };
}

