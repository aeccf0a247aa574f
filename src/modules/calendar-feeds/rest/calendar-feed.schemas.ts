/** The JSON schemas of the calendar feed routes: validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { CALENDAR_FEED_LIMITS, MAX_CALENDAR_FEEDS_PER_AGENT } from '../calendar-feed.service.js';
import { errorBody, errorResponses } from '../../../platform/http/error-schemas.js';

const calendarFeedItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'created_at'],
  properties: {
    id: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const createdCalendarFeed = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'created_at', 'token', 'path'],
  properties: {
    ...calendarFeedItem.properties,
    token: { type: 'string', description: '`cal_…`: reads this agent’s feed and nothing else; not an API token. Shown only here.' },
    path: { type: 'string', description: 'Where calendar apps subscribe, relative to the gateway: `/api/agents/{id}/calendar.ics?token=…`.' },
  },
} as const;

export const createCalendarFeedRoute = {
  operationId: 'createCalendarFeed',
  summary: `Create an iCalendar feed of the caller’s bookings with its own token (shown once); at most ${MAX_CALENDAR_FEEDS_PER_AGENT} per agent (409 limit_exceeded)`,
  tags: ['calendar feeds'],
  security: SECURITY.agent,
  response: { 201: createdCalendarFeed, ...errorResponses(401, 409) },
};

export const listCalendarFeedsRoute = {
  operationId: 'listCalendarFeeds',
  summary: 'The caller’s calendar feeds',
  description: `Every calendar feed of the caller: at most ${MAX_CALENDAR_FEEDS_PER_AGENT}, the number an agent may hold, so no page is needed. Tokens are stored hashed and never shown again.`,
  tags: ['calendar feeds'],
  security: SECURITY.agent,
  response: {
    200: { type: 'object', required: ['items'], properties: { items: { type: 'array', maxItems: MAX_CALENDAR_FEEDS_PER_AGENT, items: calendarFeedItem } } },
    ...errorResponses(401),
  },
};

export const revokeCalendarFeedRoute = {
  operationId: 'revokeCalendarFeed',
  summary: 'Revoke a calendar feed: its URL stops working at once',
  tags: ['calendar feeds'],
  security: SECURITY.agent,
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses(401, 403, 404) },
};

export const getCalendarFeedRoute = {
  operationId: 'getCalendarFeed',
  summary: 'The agent’s bookings as an iCalendar (RFC 5545) feed, for calendar apps',
  description:
    'Authorised by a feed token in the URL (calendar apps send no headers), never by an API token. ' +
    'Confirmed bookings whose last occurrence ended less than ' +
    `${CALENDAR_FEED_LIMITS.endedVisibleDays} days ago, a series as one VEVENT with its RRULE, EXDATEs and TZID; ` +
    `cancellations as STATUS:CANCELLED for ${CALENDAR_FEED_LIMITS.cancelledVisibleDays} days. ` +
    `At most ${CALENDAR_FEED_LIMITS.maxEvents} events (oldest cancellations dropped first; X-Calendar-Truncated: true). ` +
    'Send the ETag back as If-None-Match: an unchanged feed answers 304 without a body.',
  tags: ['calendar feeds'],
  security: SECURITY.public,
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { token: { type: 'string', maxLength: 100, description: 'The `cal_…` token of one of the agent’s calendar feeds.' } },
  },
  response: {
    200: {
      description: 'The feed',
      headers: {
        ETag: { type: 'string' },
        'X-Calendar-Truncated': { type: 'string', enum: ['true'], description: `Sent when more than ${CALENDAR_FEED_LIMITS.maxEvents} bookings qualified.` },
      },
      content: { 'text/calendar': { schema: { type: 'string' } } },
    },
    304: { description: 'Not modified since the ETag sent as If-None-Match', type: 'null', headers: { ETag: { type: 'string' } } },
    400: errorBody,
    // 404: a path the router cannot match (an id longer than any id), see FrameworkErrors.
    ...errorResponses(401, 403, 404),
  },
};
