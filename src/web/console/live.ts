import { createClient, type Client } from 'graphql-ws';
import { ConsoleBookingEventsDocument, type ConsoleBookingEventsSubscription } from '../generated/console/graphql.js';
import type { LiveEvent } from './week-events.js';

export type { LiveEvent } from './week-events.js';

/** What the page shows about the live connection. */
export type LiveState = 'connecting' | 'connected' | 'reconnecting' | 'offline';

export interface LiveOptions {
  token: string;
  /** Each event once, in cursor order (the server's promise; a repeated cursor is dropped here too). */
  onEvent(event: LiveEvent): void;
  onState(state: LiveState): void;
  /** Connected again with no cursor to resume from: events may have been missed, reload what is shown. */
  onGap(): void;
  /** The server refused the token: the session is over. */
  onRejected(): void;
}

/** Waits between attempts: quick at first, then at most 8 s (plus jitter, so tabs do not reconnect in step). */
const RETRY_DELAYS_MS = [250, 1_000, 2_000, 4_000, 8_000];

/**
 * The caller's `bookingEvents` over graphql-ws, kept open. Reconnection is done here rather than by
 * the client library, because each new attempt must subscribe with `after:` the last cursor received:
 * the server then replays what happened while the page was away, with no gap and no duplicate.
 * Returns a function that closes the connection for good.
 */
export function startLive(options: LiveOptions): () => void {
  let cursor: string | undefined;
  let attempts = 0;
  let connectedOnce = false;
  let stopped = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let unsubscribe: (() => void) | undefined;

  let pongDue: ReturnType<typeof setTimeout> | undefined;
  const client: Client = createClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    connectionParams: () => ({ authorization: `Bearer ${options.token}` }),
    lazy: true,
    retryAttempts: 0,
    // A ping every 10 s, and no pong within 5 s ends the connection: a socket can die silently
    // (a sleeping laptop, a dropped network) and would otherwise look connected for minutes.
    keepAlive: 10_000,
    on: {
      ping: (received) => {
        if (!received) pongDue = setTimeout(() => client.terminate(), 5_000);
      },
      pong: (received) => {
        if (received) clearTimeout(pongDue);
      },
      closed: () => clearTimeout(pongDue),
      connected: () => {
        attempts = 0;
        options.onState('connected');
        if (connectedOnce && cursor === undefined) options.onGap();
        connectedOnce = true;
      },
    },
  });

  const subscribe = () => {
    if (stopped) return;
    options.onState(!connectedOnce && attempts === 0 ? 'connecting' : navigator.onLine ? 'reconnecting' : 'offline');
    unsubscribe = client.subscribe<ConsoleBookingEventsSubscription>(
      { query: ConsoleBookingEventsDocument.toString(), variables: cursor === undefined ? {} : { after: cursor } },
      {
        next: (result) => {
          const event = result.data?.bookingEvents;
          if (!event) return;
          if (cursor !== undefined && BigInt(event.cursor) <= BigInt(cursor)) return;
          cursor = event.cursor;
          options.onEvent(event);
        },
        error: (error) => {
          const codes = Array.isArray(error) ? error.map((entry: { extensions?: { code?: string } }) => entry.extensions?.code) : [];
          if (codes.includes('unauthorized') || codes.includes('forbidden')) {
            stop();
            options.onState('offline');
            options.onRejected();
            return;
          }
          retry();
        },
        // The server ended the stream (it is shutting down): resume elsewhere or later.
        complete: () => retry(),
      },
    );
  };

  const retry = () => {
    unsubscribe = undefined;
    if (stopped) return;
    if (!navigator.onLine) {
      options.onState('offline');
      return; // the 'online' listener resumes
    }
    options.onState('reconnecting');
    const delay = RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length - 1)]!;
    attempts++;
    retryTimer = setTimeout(subscribe, delay + Math.random() * delay * 0.2);
  };

  const online = () => {
    if (unsubscribe || stopped) return;
    clearTimeout(retryTimer);
    subscribe();
  };
  // Offline, the socket is as good as gone: end it now, and resume from the cursor once back online.
  const offline = () => {
    if (stopped) return;
    options.onState('offline');
    client.terminate();
  };
  window.addEventListener('online', online);
  window.addEventListener('offline', offline);

  function stop() {
    stopped = true;
    clearTimeout(retryTimer);
    clearTimeout(pongDue);
    window.removeEventListener('online', online);
    window.removeEventListener('offline', offline);
    unsubscribe?.();
    void client.dispose();
  }

  subscribe();
  return stop;
}

export type LiveSignal = { kind: 'event'; event: LiveEvent } | { kind: 'gap' };

/** Hands live signals to whichever views are on screen (each one listens while mounted). */
export class LiveHub {
  private readonly listeners = new Set<(signal: LiveSignal) => void>();

  listen(listener: (signal: LiveSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(signal: LiveSignal): void {
    for (const listener of this.listeners) listener(signal);
  }
}
