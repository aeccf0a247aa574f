/** The JSON schemas of the webhook routes: validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { BOOKING_EVENT_TYPES } from '../../booking-events/index.js';
import { MAX_WEBHOOKS_PER_AGENT } from '../sql/webhooks-per-agent-limit.trigger.js';
import { httpUrlSchema } from '../../../platform/formats.js';
import { WEBHOOK_LIMITS, WEBHOOK_URL } from '../webhook.service.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';

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

export const registerWebhookRoute = {
  operationId: 'registerWebhook',
  summary: `Register a webhook for the caller’s booking events (the secret is shown once); at most ${MAX_WEBHOOKS_PER_AGENT} per agent (409 limit_exceeded)`,
  tags: ['webhooks'],
  security: SECURITY.agent,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: httpUrlSchema(WEBHOOK_LIMITS.urlMaxLength, WEBHOOK_URL),
      events: {
        type: 'array',
        items: { type: 'string', enum: [...BOOKING_EVENT_TYPES] },
        minItems: 1,
        maxItems: WEBHOOK_LIMITS.eventsMax,
        description: 'The events to receive; omitted: all of them.',
      },
    },
  },
  response: { 201: webhookItem, ...errorResponses(400, 401, 409) },
};

export const listWebhooksRoute = {
  operationId: 'listWebhooks',
  summary: 'The caller’s webhooks',
  description: `Every webhook of the caller: at most ${MAX_WEBHOOKS_PER_AGENT}, the number an agent may register, so no page is needed.`,
  tags: ['webhooks'],
  security: SECURITY.agent,
  response: {
    200: { type: 'object', required: ['items'], properties: { items: { type: 'array', maxItems: MAX_WEBHOOKS_PER_AGENT, items: webhookItem } } },
    ...errorResponses(401),
  },
};

export const deleteWebhookRoute = {
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook',
  tags: ['webhooks'],
  security: SECURITY.agent,
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403, 404) },
};
