import type { FastifyInstance } from 'fastify';
import { SECURITY } from '../../../platform/http/openapi.js';
import { BOOKING_EVENT_TYPES } from '../entities/booking-event.entity.js';
import { MAX_WEBHOOKS_PER_AGENT } from '../entities/webhook.entity.js';
import type { WebhookService, WebhookView } from '../webhook.service.js';
import { errorResponses } from './common.schemas.js';

const webhookItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'created_at', 'disabled_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string', enum: [...BOOKING_EVENT_TYPES] } },
    created_at: { type: 'string', format: 'date-time' },
    disabled_at: { type: ['string', 'null'], format: 'date-time' },
    secret: { type: 'string', description: 'Shown only in the registration response.' },
  },
} as const;

function presentWebhook(webhook: WebhookView & { secret?: string }) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    created_at: webhook.createdAt.toISOString(),
    disabled_at: webhook.disabledAt?.toISOString() ?? null,
    ...(webhook.secret ? { secret: webhook.secret } : {}),
  };
}

export function registerWebhookRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  app.post<{ Body: { url: string; events?: string[] } }>(
    '/api/webhooks',
    {
      schema: {
        operationId: 'registerWebhook',
        summary: `Register a webhook for the caller’s booking events (the secret is shown once); at most ${MAX_WEBHOOKS_PER_AGENT} per agent (409 limit_exceeded)`,
        tags: ['webhooks'],
        security: SECURITY.agent,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: { type: 'string', minLength: 1, maxLength: 2048 },
            events: { type: 'array', items: { type: 'string' }, maxItems: 10 },
          },
        },
        response: { 201: webhookItem, ...errorResponses(400, 401, 409) },
      },
    },
    async (request, reply) => {
      const actor = await request.actor();
      return reply.code(201).send(presentWebhook(await webhooks.register(actor, request.body)));
    },
  );

  app.get(
    '/api/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'The caller’s webhooks',
        description: `Every webhook of the caller: at most ${MAX_WEBHOOKS_PER_AGENT}, the number an agent may register, so no page is needed.`,
        tags: ['webhooks'],
        security: SECURITY.agent,
        response: {
          200: { type: 'object', required: ['items'], properties: { items: { type: 'array', maxItems: MAX_WEBHOOKS_PER_AGENT, items: webhookItem } } },
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      const actor = await request.actor();
      return { items: (await webhooks.list(actor)).map(presentWebhook) };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook',
        tags: ['webhooks'],
        security: SECURITY.agent,
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const actor = await request.actor();
      await webhooks.delete(actor, request.params.id);
      return reply.code(204).send();
    },
  );
}
