import { errorResponses } from '../../../platform/http/error-schemas.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { bookingItemSchema } from '../../bookings/index.js';
import { holdCreateProperties, holdItemSchema } from '../hold.schema.js';
import { HOLD_LIMITS as L } from '../holds.service.js';

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, description: 'The hold’s id (the `id` its creation answered).', examples: ['9b2f6c1e-3d4a-4e5f-8a7b-1c2d3e4f5a6b'] } },
} as const;
const HOLD_EXAMPLE = { agentIds: ['4f8c2a8e-1d3b-4c5a-9e7f-2b6d8a0c1e34'], startsAt: '2031-03-04T10:00:00Z', endsAt: '2031-03-04T10:30:00Z', ttlSeconds: 300 };

export const createHoldRoute = {
  operationId: 'createHold',
  summary: 'Hold a slot on one or several calendars for a few minutes',
  description:
    'One hold, one held booking per calendar, all or none, under each calendar’s rules (they bind the caller unless the calendar is its own and ' +
    `does not enforce them on itself). A held slot blocks like a booking until the hold expires (${L.ttlDefaultSeconds} s by default, at most ` +
    `${L.ttlMaxSeconds} s), is confirmed or is released; an expired hold blocks nothing. 409 \`slot_taken\`, \`buffer_conflict\` or a rule’s code; ` +
    `409 \`limit_exceeded\` past ${L.maxLiveHolds} live holds; 429 \`booking_cap_reached\` for a calendar at the cap.`,
  tags: ['holds'],
  security: SECURITY.agent,
  body: { type: 'object', additionalProperties: false, required: ['startsAt', 'endsAt'], properties: holdCreateProperties, examples: [HOLD_EXAMPLE] },
  response: { 201: holdItemSchema, ...errorResponses(400, 401, 403, 409, 429) },
} as const;

export const listHoldsRoute = {
  operationId: 'listHolds',
  summary: 'The caller’s live holds, newest first',
  description: `At most ${L.maxLiveHolds} (a holder has no more at once). Holds never appear in GET /api/bookings.`,
  tags: ['holds'],
  security: SECURITY.agent,
  response: {
    200: { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', maxItems: L.maxLiveHolds, items: holdItemSchema } } },
    ...errorResponses(401),
  },
} as const;

export const getHoldRoute = {
  operationId: 'getHold',
  summary: 'One of the caller’s holds, in whatever status',
  description: '`held` (live), `confirmed`, `released` or `expired` (from expiresAt on, without waiting for a sweeper). Only the holder may read it (403 `forbidden`); an unknown id is 404 `not_found`.',
  tags: ['holds'],
  security: SECURITY.agent,
  params: idParams,
  response: { 200: holdItemSchema, ...errorResponses(401, 403, 404) },
} as const;

export const confirmHoldRoute = {
  operationId: 'confirmHold',
  summary: 'Confirm a live hold: each held booking becomes a confirmed booking with the same id',
  description:
    'In one transaction, all calendars or none, under the cap and the daily and weekly limits, with one booking.created event per calendar. ' +
    'Confirming a confirmed hold answers the same (idempotent). 409 `hold_expired` (its time was never booked) or `hold_released`.',
  tags: ['holds'],
  security: SECURITY.agent,
  params: idParams,
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['hold', 'bookings'],
      properties: { hold: holdItemSchema, bookings: { type: 'array', items: bookingItemSchema } },
    },
    ...errorResponses(401, 403, 404, 409, 429),
  },
} as const;

export const releaseHoldRoute = {
  operationId: 'releaseHold',
  summary: 'Release a hold: its time is free again at once',
  description: 'Releasing a released (or expired) hold answers 204 again; a confirmed hold is 409 `conflict` (cancel its bookings).',
  tags: ['holds'],
  security: SECURITY.agent,
  params: idParams,
  response: { 204: { type: 'null', description: 'Released' }, ...errorResponses(401, 403, 404, 409) },
} as const;
