import type { FastifyInstance } from 'fastify';
import { SECURITY } from './openapi.js';

const statusBody = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok', 'ready', 'unavailable'] },
    database_latency_ms: { type: 'number', minimum: 0, description: 'The database round trip (readiness only).' },
  },
} as const;

/** A readiness check slower than this fails: probes (Kubernetes: 1 s by default) must get an answer. */
export const READINESS_TIMEOUT_MS = 1_000;

/**
 * Liveness says the process answers; readiness says it can do its work (the database answers within
 * READINESS_TIMEOUT_MS). Readiness turns back to 200 by itself when the database does.
 */
export function registerHealthRoutes(app: FastifyInstance, pingDatabase: () => Promise<void>): void {
  const liveness = {
    operationId: 'checkLiveness',
    summary: 'Liveness: the process answers',
    description: 'Answers `{"status": "ok"}` whenever the process can answer at all; it reads nothing, not even the database. For a probe that restarts a stuck process.',
    tags: ['health'],
    security: SECURITY.public,
    response: { 200: { ...statusBody, description: 'The process answers', examples: [{ status: 'ok' }] } },
  };
  app.get('/healthz', { schema: liveness }, async () => ({ status: 'ok' }));

  const readiness = {
    operationId: 'checkReadiness',
    summary: 'Readiness: the database answers in time (503 while it does not)',
    description:
      `Pings the database: 200 \`ready\` with the round trip in ms when it answers within ${READINESS_TIMEOUT_MS} ms, else 503 \`unavailable\`. ` +
      'Turns back to 200 by itself once the database answers again. For a load balancer deciding whether to send traffic here.',
    tags: ['health'],
    security: SECURITY.public,
    response: {
      200: { ...statusBody, description: 'The database answered in time', examples: [{ status: 'ready', database_latency_ms: 0.71 }] },
      503: { ...statusBody, description: 'The database did not answer in time', examples: [{ status: 'unavailable' }] },
    },
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
