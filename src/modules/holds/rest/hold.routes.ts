import type { FastifyInstance } from 'fastify';
import type { HoldService } from '../holds.service.js';
import { confirmHoldRoute, createHoldRoute, getHoldRoute, listHoldsRoute, releaseHoldRoute } from './hold.schemas.js';

export function registerHoldRoutes(app: FastifyInstance, holds: HoldService): void {
  app.post<{ Body: { agentIds?: string[]; startsAt: string; endsAt: string; ttlSeconds?: number } }>('/api/holds', { schema: createHoldRoute }, async (request, reply) => {
    const { agentIds, startsAt, endsAt, ttlSeconds } = request.body;
    const hold = await holds.create(await request.actor(), { agentIds, startsAt: new Date(startsAt), endsAt: new Date(endsAt), ttlSeconds });
    return reply.code(201).send(hold);
  });

  app.get('/api/holds', { schema: listHoldsRoute }, async (request) => ({ items: await holds.listLive(await request.actor()) }));

  app.get<{ Params: { id: string } }>('/api/holds/:id', { schema: getHoldRoute }, async (request) => holds.get(await request.actor(), request.params.id));

  app.patch<{ Params: { id: string } }>('/api/holds/:id/confirm', { schema: confirmHoldRoute }, async (request) =>
    holds.confirm(await request.actor(), request.params.id),
  );

  app.delete<{ Params: { id: string } }>('/api/holds/:id', { schema: releaseHoldRoute }, async (request, reply) => {
    await holds.release(await request.actor(), request.params.id);
    return reply.code(204).send();
  });
}
