import type { FastifyInstance } from 'fastify';

const statusBody = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' }, database_latency_ms: { type: 'number' } },
} as const;

/**
 * Liveness says the process answers; readiness says it can do its work (the database answers).
 */
export function registerHealthRoutes(app: FastifyInstance, pingDatabase: () => Promise<void>): void {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: statusBody } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags: ['health'], response: { 200: statusBody, 503: statusBody } } }, async (request, reply) => {
    const started = performance.now();
    try {
      await pingDatabase();
      return { status: 'ready', database_latency_ms: Number((performance.now() - started).toFixed(2)) };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed: database unreachable');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
