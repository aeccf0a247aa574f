/** The JSON schemas of the calendar feed routes: validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { CALENDAR_FEED_LIMITS, MAX_CALENDAR_FEEDS_PER_AGENT, UID_DOMAIN } from '../calendar-feed.service.js';
import { errorBody, errorResponses } from '../../../platform/http/error-schemas.js';

const exampleFeedId = '5a0c9e3d-7b1f-4c2e-9d8a-6e4f2b1c0a97';
const exampleAgentId = '6c1d4c1e-2d3b-4f6a-8e0a-5b9d7e2f1c34';
const exampleFeedToken = 'cal_pxpwNYO1A3mbqRuVdBgKfB3l0j1byRmlxw7biDoKPpY';

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
  description: 'The feed, with its token and subscription path (shown this once)',
  examples: [
    {
      id: exampleFeedId,
      created_at: '2031-05-01T09:40:00.000Z',
      token: exampleFeedToken,
      path: `/api/agents/${exampleAgentId}/calendar.ics?token=${exampleFeedToken}`,
    },
  ],
} as const;

export const createCalendarFeedRoute = {
  operationId: 'createCalendarFeed',
  summary: `Create an iCalendar feed of the caller’s bookings with its own token (shown once); at most ${MAX_CALENDAR_FEEDS_PER_AGENT} per agent (409 limit_exceeded)`,
  description:
    'A read-only iCalendar feed of the caller’s calendar for calendar apps, which send no headers: its `cal_…` token goes in the URL ' +
    '(`path`) and reads this one calendar and nothing else. The token is stored hashed and shown only in this answer; revoke the feed to ' +
    'stop it. Takes no body.',
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
    200: {
      description: 'The caller’s calendar feeds, oldest first',
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', maxItems: MAX_CALENDAR_FEEDS_PER_AGENT, items: calendarFeedItem } },
      examples: [{ items: [{ id: exampleFeedId, created_at: '2031-05-01T09:40:00.000Z' }] }],
    },
    ...errorResponses(401),
  },
};

export const revokeCalendarFeedRoute = {
  operationId: 'revokeCalendarFeed',
  summary: 'Revoke a calendar feed: its URL stops working at once',
  description:
    'Deletes the feed and the only copy of its token’s hash: the next poll with its URL is 401. Only the owner may revoke it (403 `forbidden`); ' +
    'an unknown id is 404 `not_found`.',
  tags: ['calendar feeds'],
  security: SECURITY.agent,
  params: {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, description: 'The calendar feed’s id (from its creation or the list).', examples: [exampleFeedId] } },
  },
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
  params: {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, description: 'The id of the agent whose calendar is read.', examples: [exampleAgentId] } },
  },
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      token: {
        type: 'string',
        maxLength: 100,
        description: 'The `cal_…` token of one of the agent’s calendar feeds (missing or unknown: 401; another agent’s: 403).',
        examples: [exampleFeedToken],
      },
    },
  },
  response: {
    200: {
      description: 'The feed',
      headers: {
        ETag: { type: 'string', description: 'Send it back as If-None-Match on the next poll.' },
        'X-Calendar-Truncated': { type: 'string', enum: ['true'], description: `Sent when more than ${CALENDAR_FEED_LIMITS.maxEvents} bookings qualified.` },
      },
      content: {
        'text/calendar': {
          schema: { type: 'string' },
          example: [
            'BEGIN:VCALENDAR',
            'VERSION:2.0',
            `PRODID:-//${UID_DOMAIN}//calendar feed//EN`,
            'CALSCALE:GREGORIAN',
            'X-WR-CALNAME:calendar-assistant',
            'BEGIN:VEVENT',
            `UID:0f9c8a52-5f7e-4a43-9d1e-2b7f6c3d9a10@${UID_DOMAIN}`,
            'DTSTAMP:20310501T091244Z',
            'SEQUENCE:0',
            'DTSTART:20310506T140000Z',
            'DTEND:20310506T143000Z',
            'STATUS:CONFIRMED',
            'SUMMARY:Booking',
            'TRANSP:OPAQUE',
            'END:VEVENT',
            'END:VCALENDAR',
            '',
          ].join('\r\n'),
        },
      },
    },
    304: {
      description: 'Not modified since the ETag sent as If-None-Match',
      type: 'null',
      headers: { ETag: { type: 'string', description: 'The same entity tag: the feed is unchanged.' } },
    },
    400: errorBody,
    // 404: a path the router cannot match (an id longer than any id), see FrameworkErrors.
    ...errorResponses(401, 403, 404),
  },
};
