import type { FastifyInstance } from 'fastify';
import { SECURITY } from './openapi.js';

const statusBody = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' }, database_latency_ms: { type: 'number' } },
} as const;

/** A readiness check slower than this fails: probes (Kubernetes: 1 s by default) must get an answer. */
export const READINESS_TIMEOUT_MS = 1_000;

/**
 * Liveness says the process answers; readiness says it can do its work (the database answers within
 * READINESS_TIMEOUT_MS). Readiness turns back to 200 by itself when the database does.
 */
export function registerHealthRoutes(app: FastifyInstance, pingDatabase: () => Promise<void>): void {
  const liveness = { operationId: 'checkLiveness', summary: 'Liveness: the process answers', tags: ['health'], security: SECURITY.public, response: { 200: statusBody } };
  app.get('/healthz', { schema: liveness }, async () => ({ status: 'ok' }));

  const readiness = {
    operationId: 'checkReadiness',
    summary: 'Readiness: the database answers in time (503 while it does not)',
    tags: ['health'],
    security: SECURITY.public,
    response: { 200: statusBody, 503: statusBody },
  };
  app.get('/readyz', { schema: readiness }, async (request, reply) => {
    const started = performance.now();
    try {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${READINESS_TIMEOUT_MS} ms`)), READINESS_TIMEOUT_MS);
      });
      // A ping left behind is bounded by the pool's own timeouts.
      await Promise.race([pingDatabase(), late]).finally(() => clearTimeout(timer));
      return { status: 'ready', database_latency_ms: Number((performance.now() - started).toFixed(2)) };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed: database unreachable');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
