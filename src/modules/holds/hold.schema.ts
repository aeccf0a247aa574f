/** JSON Schemas of holds, for REST and MCP (one shape, hold.view.ts). */
import { HOLD_LIMITS as L } from './holds.service.js';
import { HOLD_STATUSES } from './hold.view.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

export const holdCreateProperties = {
  agentIds: {
    type: 'array',
    minItems: 1,
    maxItems: L.maxCalendars,
    items: { type: 'string', minLength: 1, maxLength: 128 },
    description: `The calendars to hold (1 to ${L.maxCalendars}): the caller’s own and its children’s; the caller’s own when absent.`,
  },
  startsAt: dateTime,
  endsAt: dateTime,
  ttlSeconds: {
    type: 'integer',
    minimum: L.ttlMinSeconds,
    maximum: L.ttlMaxSeconds,
    description: `How long the hold lasts: ${L.ttlMinSeconds} to ${L.ttlMaxSeconds} seconds, ${L.ttlDefaultSeconds} by default.`,
  },
} as const;

export const holdItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'holderAgentId', 'startsAt', 'endsAt', 'expiresAt', 'createdAt', 'status', 'calendars'],
  properties: {
    id: { type: 'string' },
    holderAgentId: { type: 'string' },
    startsAt: dateTime,
    endsAt: dateTime,
    expiresAt: dateTime,
    createdAt: dateTime,
    status: { type: 'string', enum: [...HOLD_STATUSES], description: '`held` while live; `expired` once expiresAt passed unconfirmed.' },
    calendars: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['agentId', 'bookingId'],
        properties: { agentId: { type: 'string' }, bookingId: { type: ['string', 'null'], description: 'The booking held (or confirmed) there; null once released or expired and purged.' } },
      },
    },
  },
} as const;
