import type { FastifyInstance } from 'fastify';
import { SECURITY } from '../../../platform/http/openapi.js';
import { CALENDAR_FEED_LIMITS, MAX_CALENDAR_FEEDS_PER_AGENT, type CalendarFeedService, type CalendarFeedView } from '../calendar-feed.service.js';
import { errorBody, errorResponses } from './common.schemas.js';

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

const presentCalendarFeed = (feed: CalendarFeedView) => ({ id: feed.id, created_at: feed.createdAt.toISOString() });

/** `If-None-Match` lists entity tags (or `*`); weak comparison, as RFC 9110 asks for it. */
function matchesAny(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

export function registerCalendarFeedRoutes(app: FastifyInstance, calendarFeeds: CalendarFeedService): void {
  app.post(
    '/api/calendar-feeds',
    {
      schema: {
        operationId: 'createCalendarFeed',
        summary: `Create an iCalendar feed of the caller’s bookings with its own token (shown once); at most ${MAX_CALENDAR_FEEDS_PER_AGENT} per agent (409 limit_exceeded)`,
        tags: ['calendar feeds'],
        security: SECURITY.agent,
        response: { 201: createdCalendarFeed, ...errorResponses(401, 409) },
      },
    },
    async (request, reply) => {
      const actor = await request.actor();
      const { feed, token, path } = await calendarFeeds.create(actor);
      return reply.code(201).send({ ...presentCalendarFeed(feed), token, path });
    },
  );

  app.get(
    '/api/calendar-feeds',
    {
      schema: {
        operationId: 'listCalendarFeeds',
        summary: 'The caller’s calendar feeds',
        description: `Every calendar feed of the caller: at most ${MAX_CALENDAR_FEEDS_PER_AGENT}, the number an agent may hold, so no page is needed. Tokens are stored hashed and never shown again.`,
        tags: ['calendar feeds'],
        security: SECURITY.agent,
        response: {
          200: { type: 'object', required: ['items'], properties: { items: { type: 'array', maxItems: MAX_CALENDAR_FEEDS_PER_AGENT, items: calendarFeedItem } } },
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      const actor = await request.actor();
      return { items: (await calendarFeeds.list(actor)).map(presentCalendarFeed) };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/calendar-feeds/:id',
    {
      schema: {
        operationId: 'revokeCalendarFeed',
        summary: 'Revoke a calendar feed: its URL stops working at once',
        tags: ['calendar feeds'],
        security: SECURITY.agent,
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
        response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const actor = await request.actor();
      await calendarFeeds.revoke(actor, request.params.id);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { id: string }; Querystring: { token?: string } }>(
    '/api/agents/:id/calendar.ics',
    {
      schema: {
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
      },
    },
    async (request, reply) => {
      const feed = await calendarFeeds.render(request.query.token, request.params.id);
      // Every poll revalidates: a change shows at the app's next poll, and costs one statement and no body when none happened.
      reply.header('ETag', feed.etag).header('Cache-Control', 'private, no-cache');
      if (feed.truncated) reply.header('X-Calendar-Truncated', 'true');
      if (matchesAny(request.headers['if-none-match'], feed.etag)) return reply.code(304).send();
      return reply.code(200).type('text/calendar; charset=utf-8').send(feed.body);
    },
  );
}
