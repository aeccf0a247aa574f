import type { FastifyRequest } from 'fastify';
import type { PlatformContext } from './server.js';

/** What every resolver can rely on, for an operation that came in an HTTP request (POST/GET /graphql, GraphQL over SSE). */
export function platformContextOf(request: FastifyRequest): PlatformContext {
  return {
    requestId: request.id,
    connectionId: undefined,
    credential: request.credential,
    actor: request.actor,
    log: request.log,
    ip: request.ip,
    header: (name) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : undefined;
    },
  };
}
