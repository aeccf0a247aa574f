import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The request's path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; created_at: string; data: { booking: Record<string, unknown> } };
  at: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Every request, including those answered with an error status. */
  hits: number;
  /** The headers of every request, answered or not, in arrival order. */
  hitHeaders: IncomingHttpHeaders[];
  /** Waits until `count` requests were answered 2xx. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on loopback. `respond` decides each answer by the request's ordinal:
 * a status code, 'hang' to never answer, or a promise of a status code to answer when it settles.
 */
export async function startWebhookReceiver(respond: (hit: number) => number | 'hang' | Promise<number> = () => 204): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hitHeaders: IncomingHttpHeaders[] = [];
  let hits = 0;
  const hanging = new Set<() => void>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      hitHeaders.push(request.headers);
      const answer = respond(++hits);
      if (answer === 'hang') {
        hanging.add(() => response.destroy());
        return;
      }
      const reply = (status: number) => {
        if (status >= 200 && status < 300) received.push({ path: request.url ?? '', headers: request.headers, body, json: JSON.parse(body), at: Date.now() });
        response.statusCode = status;
        response.end();
      };
      if (typeof answer === 'number') reply(answer);
      else void answer.then(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    hitHeaders,
    get hits() {
      return hits;
    },
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`received ${received.length} of ${count} webhooks within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    async close() {
      for (const end of hanging) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `probe` until it returns a value that is not undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
