import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolves once every request that has started has produced its answer (or after `timeoutMs`). */
    requestsSettled(timeoutMs: number): Promise<void>;
  }
  interface FastifyRequest {
    /**
     * For a handler that streams the raw response: its work is over, whether or not the answer
     * finished (a stream whose client went away never does).
     */
    handlerDone(): void;
  }
}

/**
 * Counts requests from arrival to the moment their answer is produced. Closing the server stops new
 * ones, but a handler whose client went away keeps running; shutdown waits for it before the
 * database goes, so it never fails half-way. An answer is produced when Fastify sends it (`onSend`)
 * or, for handlers that write the raw response themselves (MCP), when that response finishes; a
 * stream whose client went away (GraphQL over SSE) ends without finishing, so its handler says when
 * it is done.
 */
export function installInFlightTracking(app: FastifyInstance): void {
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  const settled = new WeakSet<object>();

  const settle = (request: object) => {
    if (settled.has(request)) return;
    settled.add(request);
    inFlight = Math.max(0, inFlight - 1);
    if (inFlight === 0) {
      for (const wake of waiters) wake();
      waiters = [];
    }
  };

  app.decorateRequest('handlerDone', function (this: object) {
    settle(this);
  });
  app.addHook('onRequest', async (request, reply) => {
    inFlight++;
    reply.raw.once('finish', () => settle(request));
  });
  // Closing the server ends idle keep-alive connections once; a connection busy at that moment would
  // otherwise stay open after its answer until the keep-alive timeout (72 s) and hold the shutdown.
  // So while closing, every answer says `Connection: close`, and idle connections are swept.
  let closing = false;
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    sweep = setInterval(() => app.server.closeIdleConnections(), 100);
  });
  app.addHook('onClose', async () => clearInterval(sweep));
  app.addHook('onSend', async (request, reply) => {
    if (closing) reply.header('connection', 'close');
    settle(request);
  });
  app.decorate('requestsSettled', (timeoutMs: number) => {
    if (inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  });
}
