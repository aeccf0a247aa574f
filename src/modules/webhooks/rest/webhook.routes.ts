import type { FastifyInstance } from 'fastify';
import type { WebhookService } from '../webhook.service.js';
import { presentWebhook } from './webhook.presenter.js';
import { deleteWebhookRoute, listWebhooksRoute, registerWebhookRoute } from './webhook.schemas.js';

export function registerWebhookRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  app.post<{ Body: { url: string; events?: string[] } }>('/api/webhooks', { schema: registerWebhookRoute }, async (request, reply) => {
    const actor = await request.actor();
    return reply.code(201).send(presentWebhook(await webhooks.register(actor, request.body)));
  });

  app.get('/api/webhooks', { schema: listWebhooksRoute }, async (request) => {
    const actor = await request.actor();
    return { items: (await webhooks.list(actor)).map(presentWebhook) };
  });

  app.delete<{ Params: { id: string } }>('/api/webhooks/:id', { schema: deleteWebhookRoute }, async (request, reply) => {
    const actor = await request.actor();
    await webhooks.delete(actor, request.params.id);
    return reply.code(204).send();
  });
}
