/** The JSON schemas of the webhook routes: validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { BOOKING_EVENT_TYPES } from '../../booking-events/index.js';
import { MAX_WEBHOOKS_PER_AGENT } from '../sql/webhooks-per-agent-limit.trigger.js';
import { httpUrlSchema } from '../../../platform/formats.js';
import { WEBHOOK_LIMITS, WEBHOOK_URL } from '../webhook.service.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';

const exampleWebhook = {
  id: 'd4e7a1c9-3b2f-4e6d-8a5c-1f0b9e7d2c63',
  url: 'https://example.com/hooks/bookings',
  events: ['booking.created', 'booking.cancelled'],
  created_at: '2031-05-01T09:30:00.000Z',
  disabled_at: null,
} as const;

const webhookItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'created_at', 'disabled_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string', description: 'Where deliveries are POSTed.' },
    events: { type: 'array', items: { type: 'string', enum: [...BOOKING_EVENT_TYPES] }, description: 'The event types delivered.' },
    created_at: { type: 'string', format: 'date-time' },
    disabled_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When deliveries stopped after WEBHOOK_DISABLE_AFTER failures in a row (GraphQL `enableWebhook` resumes them); null while enabled.',
    },
    secret: {
      type: 'string',
      description: '`whsec_…`: the Standard Webhooks signing key of every delivery (`webhook-signature`). Shown only in the registration response.',
    },
  },
  examples: [exampleWebhook],
} as const;

export const registerWebhookRoute = {
  operationId: 'registerWebhook',
  summary: `Register a webhook for the caller’s booking events (the secret is shown once); at most ${MAX_WEBHOOKS_PER_AGENT} per agent (409 limit_exceeded)`,
  description:
    'Every booking event on the caller’s calendar of the listed types is POSTed to `url` as JSON, signed per Standard Webhooks ' +
    '(`webhook-id`, `webhook-timestamp`, `webhook-signature`, keyed with `secret`), at least once, retried with exponential backoff up to ' +
    'WEBHOOK_MAX_ATTEMPTS; every delivery carries `webhook-cursor` for GET /api/bookings/changes. The URL must resolve to public addresses only ' +
    '(400 naming `url` otherwise, checked again at delivery); 503 `upstream_unavailable` when its host cannot be looked up now. ' +
    'The answer holds `secret` once: keep it to verify deliveries.',
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
    examples: [{ url: exampleWebhook.url, events: exampleWebhook.events }],
  },
  response: {
    201: {
      ...webhookItem,
      description: 'The webhook, with its signing secret (shown this once)',
      examples: [{ ...exampleWebhook, secret: 'whsec_6hFtoy90DyBN1dqZuJw6qJTqU7Eh7AL8lNM8CMAWbiY=' }],
    },
    ...errorResponses(400, 401, 409, 503),
  },
};

export const listWebhooksRoute = {
  operationId: 'listWebhooks',
  summary: 'The caller’s webhooks',
  description:
    `Every webhook of the caller, oldest first: at most ${MAX_WEBHOOKS_PER_AGENT}, the number an agent may register, so no page is needed. ` +
    'Secrets are never shown again; a disabled webhook shows `disabled_at`.',
  tags: ['webhooks'],
  security: SECURITY.agent,
  response: {
    200: {
      description: 'The caller’s webhooks',
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', maxItems: MAX_WEBHOOKS_PER_AGENT, items: webhookItem } },
    },
    ...errorResponses(401),
  },
};

export const deleteWebhookRoute = {
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook',
  description: 'Deletes the webhook with its deliveries still due (only an attempt already in flight may still arrive). Only its owner may delete it (403 `forbidden`); an unknown id is 404 `not_found`.',
  tags: ['webhooks'],
  security: SECURITY.agent,
  params: {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, description: 'The webhook’s id.', examples: [exampleWebhook.id] } },
  },
  response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403, 404) },
};
