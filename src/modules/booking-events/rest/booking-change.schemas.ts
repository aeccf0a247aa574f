import { errorBody, errorResponses } from '../../../platform/http/error-schemas.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { fullBookingItemSchema } from '../../bookings/index.js';
import { CHANGE_FEED_LIMITS, EVENT_CURSOR } from '../change-feed.service.js';

const cursor = { type: 'string', pattern: EVENT_CURSOR.pattern, maxLength: 18 } as const;

const exampleBooking = {
  id: '0f9c8a52-5f7e-4a43-9d1e-2b7f6c3d9a10',
  agentId: '6c1d4c1e-2d3b-4f6a-8e0a-5b9d7e2f1c34',
  startsAt: '2031-05-06T14:00:00.000Z',
  endsAt: '2031-05-06T15:00:00.000Z',
  status: 'cancelled',
  rrule: null,
  warningSentAt: null,
  createdAt: '2031-05-01T09:12:44.310Z',
  version: 1,
} as const;

const bookingChange = {
  type: 'object',
  additionalProperties: false,
  required: ['cursor', 'type', 'occurredAt', 'agentId', 'booking', 'deleted'],
  description: 'One event, with the booking as it is now (`booking`) or a tombstone (`deleted`): exactly one of the two is set.',
  properties: {
    cursor: { ...cursor, description: 'The event id: `since` for what follows, `after` of GraphQL `bookingEvents`, `webhook-cursor` of its delivery.' },
    type: { type: 'string', description: 'booking.created, booking.cancelled, booking.transferred, booking.reminder, or any type the log holds' },
    occurredAt: { type: 'string', format: 'date-time' },
    agentId: { type: 'string', description: 'Whose calendar it happened on (several in a family feed).' },
    booking: { anyOf: [fullBookingItemSchema, { type: 'null' }], description: 'The booking as it is now; a cancelled one stays (`status: cancelled`).' },
    deleted: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'reason'],
          properties: {
            id: { type: 'string', description: 'The booking’s id: drop it from your copy.' },
            reason: { type: 'string', enum: ['transferred', 'removed'], description: '`transferred`: it now belongs to another agent; `removed`: it no longer exists.' },
          },
        },
        { type: 'null' },
      ],
    },
  },
} as const;

export const bookingChangesRoute = {
  operationId: 'listBookingChanges',
  summary: 'What changed on the caller’s calendar since a cursor (the change feed)',
  description:
    'Every event after `since`, in commit order, each with the booking as it is now or a tombstone, and `nextSince` to keep. ' +
    'Without `since`: no changes, and `nextSince` is the head of the feed (list the calendar with GET /api/bookings, then follow from it). ' +
    'The cursor is the one every webhook delivery carries (`webhook-cursor`; the body’s `id` is `evt_<cursor>`) and GraphQL `bookingEvents(after:)` takes: ' +
    'a receiver whose `webhook-previous-cursor` is not the last cursor it saw missed something and reads from its last cursor here. ' +
    '`agentId` reads a child’s feed (an agent’s feed is read by the agent and its parent); `family=true` the caller’s and its children’s in one cursor order ' +
    `(at most ${CHANGE_FEED_LIMITS.familyMaxAgents} agents, else 409 \`limit_exceeded\`). ` +
    'A cursor older than the retention (BOOKING_EVENTS_RETENTION_DAYS, 30 by default) answers 410 `cursor_expired`: list the calendar again and follow from a new head.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  querystring: {
    type: 'object',
    properties: {
      since: { ...cursor, description: 'The `nextSince` of the previous answer, a `webhook-cursor`, or `0` for everything still kept.', examples: ['1042'] },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: CHANGE_FEED_LIMITS.pageMax,
        default: CHANGE_FEED_LIMITS.pageDefault,
        description: 'The most changes one page holds; `hasMore` says the page was full.',
      },
      agentId: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description: 'A child’s id: read its feed instead of the caller’s.',
        examples: ['1d7c3e5a-8b2f-4a6d-9c0e-7f1b4a2d6e85'],
      },
      family: { type: 'boolean', default: false, description: 'The caller’s feed and its children’s, in one cursor order (not with `agentId`).' },
    },
  },
  response: {
    200: {
      description: 'A page of changes',
      type: 'object',
      additionalProperties: false,
      required: ['changes', 'nextSince', 'hasMore'],
      properties: {
        changes: { type: 'array', items: bookingChange },
        nextSince: { ...cursor, description: 'Keep it; pass it as `since` next time (the last change’s cursor, or `since` when none came).' },
        hasMore: { type: 'boolean', description: 'The page was full: ask again at once.' },
      },
      examples: [
        {
          changes: [
            { cursor: '1043', type: 'booking.created', occurredAt: '2031-05-01T09:12:44.310Z', agentId: exampleBooking.agentId, booking: exampleBooking, deleted: null },
            { cursor: '1047', type: 'booking.cancelled', occurredAt: '2031-05-02T16:40:03.002Z', agentId: exampleBooking.agentId, booking: exampleBooking, deleted: null },
            {
              cursor: '1051',
              type: 'booking.transferred',
              occurredAt: '2031-05-03T08:00:00.000Z',
              agentId: exampleBooking.agentId,
              booking: null,
              deleted: { id: '7a2e9d4b-1c3f-4e8a-9b6d-0f5c2a7e8d13', reason: 'transferred' },
            },
          ],
          nextSince: '1051',
          hasMore: false,
        },
      ],
    },
    ...errorResponses(400, 401, 403, 404, 409),
    410: { ...errorBody, description: '`cursor_expired`: events after `since` are no longer kept', examples: [{ error: 'cursor_expired', message: 'events after this cursor are no longer kept (they are kept 30 days): list the calendar again (GET /api/bookings, GraphQL bookings, MCP list_bookings), then follow the feed from a new cursor (ask without since for its head)' }] },
  },
} as const;
