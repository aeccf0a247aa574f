import type { ServerOptions } from 'node:http';

/** How often the server looks for requests over their time; the bound a client sees is the timeout plus this. */
export const SLOW_CLIENT_CHECK_INTERVAL_MS = 1_000;

/**
 * Node HTTP server options that cut off a client sending its request too slowly: its headers and its
 * whole body must arrive within `requestTimeoutMs` of the request's first byte (of the connection's
 * opening, for its first request); such a client is answered 408 and disconnected.
 *
 * All three are needed. Fastify's `requestTimeout` sets only `server.requestTimeout`, after the server
 * is made, so `headersTimeout` stays at Node's 60 s; Node takes a headers timeout longer than the
 * request timeout as the two swapped (node_http_parser.cc, `ConnectionsList::Expired`), which made the
 * whole-request bound 60 s. And Node looks for expired requests only every `connectionsCheckingInterval`
 * (30 s by default): headers were cut off 30–60 s after their first byte, bodies after 60–90 s.
 */
export function slowClientLimits(requestTimeoutMs: number): Required<Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'>> {
  return {
    headersTimeout: requestTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(SLOW_CLIENT_CHECK_INTERVAL_MS, requestTimeoutMs),
  };
}
