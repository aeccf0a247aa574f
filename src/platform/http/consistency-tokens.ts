import type { FastifyInstance } from 'fastify';
import { CONSISTENCY_TOKEN_HEADER, tokenAfterWrite, tokenOwed, type ReadYourWrites } from '../db/read-your-writes.js';

/** Methods that only read; any other is a write request. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every request runs as one read-your-writes unit (db/read-your-writes.ts): its credential, the
 * `X-Consistency-Token` it sent back (malformed: 400 naming the header), and whether it writes. A REST
 * request with a method other than GET, HEAD or OPTIONS writes; its replica reads stay on the primary
 * and its answer (below 400) carries the token of its write. Paths in `perOperation` (GraphQL, MCP)
 * decide per operation instead: a mutation, a tool that is not read-only.
 */
export function installConsistencyTokens(app: FastifyInstance, consistency: ReadYourWrites, perOperation: readonly string[]): void {
  app.addHook('onRequest', (request, reply, done) => {
    const presented = request.headers[CONSISTENCY_TOKEN_HEADER];
    let unit;
    try {
      unit = consistency.unit({
        credential: request.credential,
        presentedToken: Array.isArray(presented) ? presented.join(',') : presented,
        writes: !SAFE_METHODS.has(request.method) && !perOperation.includes(request.routeOptions.url ?? ''),
        response: reply.raw,
      });
    } catch (error) {
      done(error as Error);
      return;
    }
    consistency.run(unit, done);
  });
  // After the handler: its write has committed. The token goes out as a header (set on the raw
  // response, which also reaches answers a handler writes itself).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 400 && tokenOwed()) await tokenAfterWrite();
    return payload;
  });
}
