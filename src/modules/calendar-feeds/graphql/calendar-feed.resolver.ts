import { Arg, Ctx, Directive, ID, Mutation, Query, Resolver } from 'type-graphql';
import { MAX_CALENDAR_FEEDS_PER_AGENT, type CalendarFeedService } from '../calendar-feed.service.js';
import { CalendarFeedNode, CreatedCalendarFeed } from './calendar-feed.types.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import { listSize } from '../../../platform/graphql/directives.js';

@Resolver(() => CalendarFeedNode)
export class CalendarFeedResolver {
  constructor(private readonly feedService: CalendarFeedService) {}

  @Directive(listSize({ assumedSize: MAX_CALENDAR_FEEDS_PER_AGENT }))
  @Query(() => [CalendarFeedNode], { description: `The caller's calendar feeds: at most ${MAX_CALENDAR_FEEDS_PER_AGENT}, the number an agent may hold.` })
  async calendarFeeds(@Ctx() ctx: PlatformContext): Promise<CalendarFeedNode[]> {
    const actor = await ctx.actor();
    return (await this.feedService.list(actor)).map(CalendarFeedNode.from);
  }

  @Mutation(() => CreatedCalendarFeed, {
    description: `A new iCalendar feed of the caller's bookings with its own token; at most ${MAX_CALENDAR_FEEDS_PER_AGENT} per agent, the next is refused with \`limit_exceeded\`.`,
  })
  async createCalendarFeed(@Ctx() ctx: PlatformContext): Promise<CreatedCalendarFeed> {
    const actor = await ctx.actor();
    const { feed, token, path } = await this.feedService.create(actor);
    return Object.assign(new CreatedCalendarFeed(), { feed: CalendarFeedNode.from(feed), token, path });
  }

  @Mutation(() => Boolean, { description: 'The feed’s URL stops working at once.' })
  async revokeCalendarFeed(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<boolean> {
    const actor = await ctx.actor();
    await this.feedService.revoke(actor, id);
    return true;
  }
}
