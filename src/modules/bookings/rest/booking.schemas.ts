import { AFTER_QUERY_PARAMETER, NEXT_PAGE_LINK_HEADER } from '../../../platform/http/next-page-link.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { BOOKING_LIMITS } from '../booking.service.js';
import { BOOKING_FIELDS, BOOKING_STATUSES } from '../booking.shape.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../platform/api-limits.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** Seed 000 `BookingCreate`: no other properties allowed (an rrule comes only through GraphQL). */
export const bookingCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['agentId', 'startsAt', 'endsAt'],
  properties: {
    agentId: { type: 'string', minLength: 1, maxLength: BOOKING_LIMITS.agentIdMaxLength },
    startsAt: dateTime,
    endsAt: dateTime,
  },
} as const;

const FIELD_SCHEMAS = {
  id: { type: 'string' },
  agentId: { type: 'string', minLength: 1, maxLength: BOOKING_LIMITS.agentIdMaxLength },
  status: { type: 'string', enum: BOOKING_STATUSES },
} as const;
const KIND_SCHEMAS = { id: { type: 'string' }, text: { type: 'string' }, status: { type: 'string' }, instant: dateTime } as const;

function fieldSchema(field: (typeof BOOKING_FIELDS)[number]) {
  const schema = (FIELD_SCHEMAS as Record<string, { type: string }>)[field.name] ?? KIND_SCHEMAS[field.kind];
  return field.nullable ? { ...schema, type: [schema.type, 'null'] } : schema;
}

/**
 * Seed 000 `BookingItem`, written from the shape (booking.shape.ts): every field, all required but those the
 * seed lets be absent. Services answer the item with its times already as ISO strings, sent as they are.
 */
export const bookingItem = {
  type: 'object',
  additionalProperties: false,
  required: BOOKING_FIELDS.filter((field) => !('optionalInSeed' in field && field.optionalInSeed)).map((field) => field.name),
  properties: Object.fromEntries(BOOKING_FIELDS.map((field) => [field.name, fieldSchema(field)])),
} as const;

const limit = (defaultValue: number) => ({ type: 'integer', minimum: 1, maximum: BOOKING_LIMITS.listMax, default: defaultValue }) as const;

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;

const idempotencyHeader = {
  type: 'object',
  properties: { 'idempotency-key': IDEMPOTENCY_KEY_HEADER },
} as const;

export const createBookingRoute = {
  operationId: 'createBooking',
  summary: 'Create a booking on the caller’s calendar',
  tags: ['scheduling'],
  security: SECURITY.agent,
  headers: idempotencyHeader,
  body: bookingCreateBody,
  response: { 201: bookingItem, ...errorResponses(400, 401, 403, 409, 429) },
} as const;

export const listBookingsRoute = {
  operationId: 'listBookings',
  summary: 'List the caller’s bookings, optionally those intersecting [from, to)',
  description:
    'By `startsAt`, then id. When more bookings follow than `limit`, the answer carries `Link: <…>; rel="next"`: the URL of the next page ' +
    '(the same query, `after` set). Its cursor is the `endCursor` of GraphQL’s `bookings` and the `nextCursor` of MCP’s `list_bookings`.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  querystring: {
    type: 'object',
    properties: { limit: limit(BOOKING_LIMITS.listDefault), from: dateTime, to: dateTime, after: AFTER_QUERY_PARAMETER },
  },
  response: {
    200: {
      description: 'A page of bookings',
      headers: NEXT_PAGE_LINK_HEADER,
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: { items: { type: 'array', items: bookingItem } },
    },
    ...errorResponses(400, 401),
  },
} as const;

export const cancelBookingRoute = {
  operationId: 'cancelBooking',
  summary: 'Soft-cancel a booking (idempotent)',
  tags: ['scheduling'],
  security: SECURITY.agent,
  params: idParams,
  response: { 204: { type: 'null', description: 'Cancelled' }, ...errorResponses(401, 403, 404) },
} as const;

export const occurrencesRoute = {
  operationId: 'listOccurrences',
  summary: 'The next concrete slots of a booking, from now',
  description: 'When more occurrences follow than `limit`, the answer carries `Link: <…>; rel="next"`: the URL of the next page.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  params: idParams,
  querystring: { type: 'object', properties: { limit: limit(BOOKING_LIMITS.listDefault), after: AFTER_QUERY_PARAMETER } },
  response: {
    200: {
      description: 'A page of occurrences',
      headers: NEXT_PAGE_LINK_HEADER,
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['startsAt', 'endsAt'], properties: { startsAt: dateTime, endsAt: dateTime } },
        },
      },
    },
    ...errorResponses(400, 401, 403, 404),
  },
} as const;
