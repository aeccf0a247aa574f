import type { CalendarFeedView, CreatedCalendarFeed } from '../calendar-feed.service.js';

/** A calendar feed as the REST routes list it: never its token. */
export const presentCalendarFeed = (feed: CalendarFeedView) => ({ id: feed.id, created_at: feed.createdAt.toISOString() });

/** A feed just created: the only answer that shows its token and the path to subscribe to. */
export function presentCreatedCalendarFeed({ feed, token, path }: CreatedCalendarFeed) {
  return { ...presentCalendarFeed(feed), token, path };
}
