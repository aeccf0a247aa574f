import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import type { AgentService } from '../agent.service.js';
import { presentCreatedAgent } from '../agent.view.js';
import type { FreeBusyVisibility } from '../entities/agent.entity.js';
import { presentFreeBusyVisibility } from './agent.presenter.js';
import { createAgentRoute, freeBusyVisibilityRoute, setFreeBusyVisibilityRoute } from './agent.schemas.js';

interface AgentCreateBody {
  name: string;
  metadata?: Record<string, unknown>;
  config?: Record<string, unknown>;
  idempotency_key?: string;
  bootstrap?: true;
}

/** The `Idempotency-Key` header counts the same as the body's `idempotency_key`. */
function idempotencyKeyOf(body: AgentCreateBody, header: string | undefined): string | undefined {
  if (header !== undefined && body.idempotency_key !== undefined && header !== body.idempotency_key) {
    throw AppError.validation({ idempotency_key: 'must match the Idempotency-Key header when both are sent' });
  }
  return body.idempotency_key ?? header;
}

export function registerAgentRoutes(app: FastifyInstance, agents: AgentService): void {
  app.post<{ Body: AgentCreateBody; Headers: { 'idempotency-key'?: string } }>(
    '/api/agents',
    { schema: createAgentRoute },
    async (request, reply) => {
      const created = await agents.create(await request.actor(), {
        name: request.body.name,
        metadata: request.body.metadata,
        config: request.body.config,
        idempotencyKey: idempotencyKeyOf(request.body, request.headers['idempotency-key']),
        bootstrap: request.body.bootstrap,
      });
      return reply.code(201).send(presentCreatedAgent(created));
    },
  );

  app.get('/api/agents/me/free-busy-visibility', { schema: freeBusyVisibilityRoute }, async (request) =>
    presentFreeBusyVisibility(agents.me(await request.actor())),
  );

  app.put<{ Body: { visibility: FreeBusyVisibility } }>('/api/agents/me/free-busy-visibility', { schema: setFreeBusyVisibilityRoute }, async (request) =>
    presentFreeBusyVisibility(await agents.setFreeBusyVisibility(await request.actor(), request.body.visibility)),
  );
}
