/**
 * A process of S6 subscribers (forked by run.ts): real graphql-ws clients that record when each
 * booking.created event reached each subscription. Subscribers are other machines in production; in
 * one process with the load generator, their own parsing (about 13 µs a message here) queued behind
 * each other and behind the creates, so the bench measured its client as much as the gateway.
 *
 * Parent → child: `{ type: 'start', … }`, then `'status'`, `'collect'` (answers and forgets the
 * receipts), `'stop'`. Child → parent: answers of the same type.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface StartSubscribers {
  type: 'start';
  url: string;
  connectionParams: Record<string, string>;
  sockets: number;
  subscriptionsPerSocket: number;
  query: string;
}
export type ToSubscribers = StartSubscribers | { type: 'status' } | { type: 'collect' } | { type: 'stop' };

export interface SubscribersStatus {
  type: 'status';
  subscriptions: number;
  /** Subscriptions that received anything since the last collect. */
  live: number;
  /** The fewest events any subscription received since the last collect. */
  fewest: number;
  errors: string[];
}
export interface SubscribersReceipts {
  type: 'collect';
  /** Per subscription: booking id → epoch ms of receipt. */
  receipts: Record<string, number>[];
  /** Booking id → the event's createdAt, epoch ms. */
  createdAt: Record<string, number>;
}
export type FromSubscribers = { type: 'started' } | SubscribersStatus | SubscribersReceipts | { type: 'stopped' };

const now = () => performance.timeOrigin + performance.now();
const clients: Client[] = [];
const receipts: Map<string, number>[] = [];
const createdAt = new Map<string, number>();
const errors: string[] = [];

function reply(message: FromSubscribers): void {
  process.send!(message);
}

async function start(options: StartSubscribers): Promise<void> {
  const connected: Promise<unknown>[] = [];
  for (let socket = 0; socket < options.sockets; socket++) {
    const client = createClient({
      url: options.url,
      webSocketImpl: WebSocket,
      connectionParams: options.connectionParams,
      lazy: false,
      retryAttempts: 0,
      on: { error: (error) => void errors.push(String(error)) },
    });
    connected.push(new Promise((resolve) => client.on('connected', resolve)));
    clients.push(client);
    for (let i = 0; i < options.subscriptionsPerSocket; i++) {
      const received = new Map<string, number>();
      receipts.push(received);
      client.subscribe<{ bookingEvents: { createdAt: string; booking: { id: string } } }>(
        { query: options.query },
        {
          next: (value) => {
            const event = value.data?.bookingEvents;
            if (!event) return void errors.push(JSON.stringify(value.errors ?? value).slice(0, 300));
            received.set(event.booking.id, now());
            if (!createdAt.has(event.booking.id)) createdAt.set(event.booking.id, Date.parse(event.createdAt));
          },
          error: (error) => void errors.push(error instanceof Error ? error.message : JSON.stringify(error).slice(0, 300)),
          complete: () => undefined,
        },
      );
    }
  }
  await Promise.all(connected);
  reply({ type: 'started' });
}

process.on('message', (message: ToSubscribers) => {
  switch (message.type) {
    case 'start':
      void start(message);
      return;
    case 'status': {
      let live = 0;
      let fewest = Infinity;
      for (const received of receipts) {
        if (received.size > 0) live++;
        fewest = Math.min(fewest, received.size);
      }
      reply({ type: 'status', subscriptions: receipts.length, live, fewest: receipts.length ? fewest : 0, errors: errors.splice(0) });
      return;
    }
    case 'collect':
      reply({ type: 'collect', receipts: receipts.map((received) => Object.fromEntries(received)), createdAt: Object.fromEntries(createdAt) });
      for (const received of receipts) received.clear();
      createdAt.clear();
      return;
    case 'stop':
      void Promise.all(clients.map((client) => client.dispose())).finally(() => {
        reply({ type: 'stopped' });
        process.disconnect();
      });
      return;
  }
});
