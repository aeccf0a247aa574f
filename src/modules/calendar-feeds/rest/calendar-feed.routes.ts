import type { FastifyInstance } from 'fastify';
import type { CalendarFeedService } from '../calendar-feed.service.js';
import { presentCalendarFeed, presentCreatedCalendarFeed } from './calendar-feed.presenter.js';
import { createCalendarFeedRoute, getCalendarFeedRoute, listCalendarFeedsRoute, revokeCalendarFeedRoute } from './calendar-feed.schemas.js';

/** `If-None-Match` lists entity tags (or `*`); weak comparison, as RFC 9110 asks for it. */
function matchesAny(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

export function registerCalendarFeedRoutes(app: FastifyInstance, calendarFeeds: CalendarFeedService): void {
  app.post('/api/calendar-feeds', { schema: createCalendarFeedRoute }, async (request, reply) => {
    const actor = await request.actor();
    return reply.code(201).send(presentCreatedCalendarFeed(await calendarFeeds.create(actor)));
  });

  app.get('/api/calendar-feeds', { schema: listCalendarFeedsRoute }, async (request) => {
    const actor = await request.actor();
    return { items: (await calendarFeeds.list(actor)).map(presentCalendarFeed) };
  });

  app.delete<{ Params: { id: string } }>('/api/calendar-feeds/:id', { schema: revokeCalendarFeedRoute }, async (request, reply) => {
    const actor = await request.actor();
    await calendarFeeds.revoke(actor, request.params.id);
    return reply.code(204).send();
  });

  app.get<{ Params: { id: string }; Querystring: { token?: string } }>(
    '/api/agents/:id/calendar.ics',
    { schema: getCalendarFeedRoute },
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
