import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import type { AvailabilityRulesService } from '../rules.service.js';
import type { AvailabilityRulesInput } from '../rules.view.js';
import { deleteRulesRoute, getRulesRoute, putRulesRoute } from './rules.schemas.js';

/** `me` is the caller. */
const agentOfPath = (id: string) => (id === 'me' ? undefined : id);

export function registerRulesRoutes(app: FastifyInstance, rules: AvailabilityRulesService): void {
  app.get<{ Params: { id: string } }>('/api/agents/:id/availability-rules', { schema: getRulesRoute }, async (request) => {
    const found = await rules.get(await request.actor(), agentOfPath(request.params.id));
    if (!found) throw new AppError('not_found', 'the agent has no availability rules');
    return found;
  });

  app.put<{ Params: { id: string }; Body: AvailabilityRulesInput }>('/api/agents/:id/availability-rules', { schema: putRulesRoute }, async (request) =>
    rules.set(await request.actor(), request.body, agentOfPath(request.params.id)),
  );

  app.delete<{ Params: { id: string } }>('/api/agents/:id/availability-rules', { schema: deleteRulesRoute }, async (request, reply) => {
    await rules.clear(await request.actor(), agentOfPath(request.params.id));
    return reply.code(204).send();
  });
}
