/**
 * A process of bench subscribers (forked by run.ts): real graphql-ws clients that record when each
 * booking.created event reached each subscription. Subscribers are other machines in production; in
 * one process with the load generator, their own parsing (about 13 µs a message here) queued behind
 * each other and behind the creates, so the bench measured its client as much as the gateway.
 *
 * Each socket presents one agent's credential and may leave from its own local address (127.0.0.x: the
 * gateway admits at most 500 sockets per client address). Parent → child: `{ type: 'start', … }`
 * (connects the sockets; subscribes at once unless `subscribeLater`), `{ type: 'subscribe', perSecond }`, then `'status'`,
 * `'collect'` (answers and forgets the receipts), `'stop'`. Child → parent: answers of the same type.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface SocketPlan {
  agentId: string;
  connectionParams: Record<string, string>;
  /** The local address to connect from (any of 127.0.0.0/8 on Linux); the kernel's choice when absent. */
  localAddress?: string | undefined;
  subscriptions: number;
}

export interface StartSubscribers {
  type: 'start';
  url: string;
  sockets: SocketPlan[];
  query: string;
  /** Connect only; the subscriptions follow on `{ type: 'subscribe' }` (memory per socket, then per subscription). */
  subscribeLater: boolean;
}
export interface Subscribe {
  type: 'subscribe';
  /** Subscriptions this process sends a second, a socket's at a time; 0: all at once. */
  perSecond: number;
}
export type ToSubscribers = StartSubscribers | Subscribe | { type: 'status' } | { type: 'collect' } | { type: 'stop' };

export interface SubscribersStatus {
  type: 'status';
  /** Sockets whose connection the gateway acknowledged. */
  connected: number;
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
  /** Per subscription (same order): the agent whose events it receives. */
  agents: string[];
  /** Booking id → the event's createdAt, epoch ms. */
  createdAt: Record<string, number>;
}
export type FromSubscribers = { type: 'started' } | { type: 'subscribed' } | SubscribersStatus | SubscribersReceipts | { type: 'stopped' };

/** Sockets being connected at once: a burst of a thousand handshakes would outlast the gateway's 3 s `connection_init` wait on two busy cores. */
const CONNECTING_AT_ONCE = 50;

const now = () => performance.timeOrigin + performance.now();
const clients: { client: Client; plan: SocketPlan }[] = [];
const receipts: Map<string, number>[] = [];
const agents: string[] = [];
const createdAt = new Map<string, number>();
const errors: string[] = [];
let query = '';
let connected = 0;

function reply(message: FromSubscribers): void {
  process.send!(message);
}

/** `ws` with a fixed local address, in the shape graphql-ws constructs (`new Impl(url, protocols)`). */
function webSocketFrom(localAddress: string | undefined): typeof WebSocket {
  if (localAddress === undefined) return WebSocket;
  return class BoundWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { localAddress });
    }
  } as typeof WebSocket;
}

async function connect(url: string, plan: SocketPlan): Promise<void> {
  const client = createClient({
    url,
    webSocketImpl: webSocketFrom(plan.localAddress),
    connectionParams: plan.connectionParams,
    lazy: false,
    retryAttempts: 0,
    on: { error: (error) => void errors.push(String(error instanceof Error ? error.message : JSON.stringify(error))) },
  });
  clients.push({ client, plan });
  await new Promise<void>((resolve) => {
    const stopWatching = client.on('closed', (event) => {
      const { code, reason } = event as { code?: number; reason?: string };
      errors.push(`socket closed before its connection was acknowledged (${code ?? '?'} ${reason ?? ''})`.trim());
      resolve();
    });
    client.on('connected', () => {
      stopWatching();
      connected++;
      resolve();
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Subscribes every socket's subscriptions, `perSecond` a second (0: at once). */
async function subscribeAll(perSecond: number): Promise<void> {
  const started = performance.now();
  let sent = 0;
  for (const { client, plan } of clients) {
    if (perSecond > 0) {
      const due = started + (sent / perSecond) * 1000 - performance.now();
      if (due > 0) await sleep(due);
    }
    sent += plan.subscriptions;
    for (let i = 0; i < plan.subscriptions; i++) {
      const received = new Map<string, number>();
      receipts.push(received);
      agents.push(plan.agentId);
      client.subscribe<{ bookingEvents: { createdAt: string; booking: { id: string } } }>(
        { query },
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
}

async function start(options: StartSubscribers): Promise<void> {
  query = options.query;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONNECTING_AT_ONCE, options.sockets.length) }, async () => {
      for (let index = next++; index < options.sockets.length; index = next++) await connect(options.url, options.sockets[index]!);
    }),
  );
  if (!options.subscribeLater) await subscribeAll(0);
  reply({ type: 'started' });
}

process.on('message', (message: ToSubscribers) => {
  switch (message.type) {
    case 'start':
      void start(message);
      return;
    case 'subscribe':
      void subscribeAll(message.perSecond).then(() => reply({ type: 'subscribed' }));
      return;
    case 'status': {
      let live = 0;
      let fewest = Infinity;
      for (const received of receipts) {
        if (received.size > 0) live++;
        fewest = Math.min(fewest, received.size);
      }
      reply({ type: 'status', connected, subscriptions: receipts.length, live, fewest: receipts.length ? fewest : 0, errors: errors.splice(0) });
      return;
    }
    case 'collect':
      reply({ type: 'collect', receipts: receipts.map((received) => Object.fromEntries(received)), agents, createdAt: Object.fromEntries(createdAt) });
      for (const received of receipts) received.clear();
      createdAt.clear();
      return;
    case 'stop':
      void Promise.all(clients.map(({ client }) => client.dispose())).finally(() => {
        reply({ type: 'stopped' });
        process.disconnect();
      });
      return;
  }
});
