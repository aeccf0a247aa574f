import { Arg, Ctx, Directive, Field, ID, Int, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import { checkLimit } from '../../../platform/graphql/page-size.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { AgentsContext } from '../../agents/index.js';
import { BookingNode, type BookingEventView } from '../../bookings/index.js';
import { CHANGE_FEED_LIMITS, type BookingChangeFeed } from '../change-feed.service.js';
import { BookingChangePageNode } from './booking-change.types.js';
import { publicEventId } from '../event-id.js';

/** The GraphQL context slice of booking events: the caller's subscription. */
export interface BookingEventsContext extends PlatformContext {
  readonly bookingEvents: {
    /** The caller's booking events (replay after `after`, then live); only an agent has them. */
    subscribe(after: string | undefined): Promise<AsyncGenerator<BookingEventView>>;
  };
}

@ObjectType('PreviousRange', { simpleResolvers: true, description: 'A booking before it was rescheduled (for one occurrence: the series it left).' })
export class PreviousRangeNode {
  @Field(() => ID)
  bookingId!: string;

  @Field(() => Date)
  startsAt!: string;

  @Field(() => Date)
  endsAt!: string;

  @Field(() => Int, { description: 'Its version before the move.' })
  version!: number;
}

@ObjectType('BookingEvent', { simpleResolvers: true, description: 'Something that happened to one of your bookings.' })
export class BookingEventNode {
  @Field({ description: 'Monotonically increasing; pass it as `after` to resume without gap or duplicate.' })
  cursor!: string;

  @Field(() => ID, { description: 'The webhook-id of the same event (`evt_<cursor>`).' })
  id!: string;

  @Field({ description: 'booking.created, booking.cancelled, booking.transferred, booking.reminder or booking.rescheduled' })
  type!: string;

  @Field(() => Date)
  createdAt!: string;

  @Field(() => BookingNode)
  booking!: BookingNode;

  @Field(() => PreviousRangeNode, { nullable: true, description: 'booking.rescheduled: where the booking was before the move.' })
  previous!: PreviousRangeNode | null;
}

@Resolver(() => BookingEventNode)
export class BookingEventResolver {
  constructor(private readonly feed: BookingChangeFeed) {}

  @Query(() => BookingChangePageNode, {
    description:
      "What happened to the caller's bookings after `since`, in commit order, each with the booking as it is now or a tombstone. " +
      'Keep `nextSince` and pass it as `since` next time; without `since` the answer has no changes and `nextSince` is the head (list the calendar, then follow from it). ' +
      'The cursor is the one of `bookingEvents(after:)` and of every webhook delivery (`webhook-cursor`). ' +
      "`agentId`: a child's feed (a parent reads its children's); `family: true`: the caller's and its children's in one cursor order " +
      `(at most ${CHANGE_FEED_LIMITS.familyMaxAgents} agents, else \`limit_exceeded\`). A cursor older than the retention answers \`cursor_expired\`.`,
  })
  @Directive(listSize({ slicingArguments: ['first'], sizedFields: ['changes'], requireOneSlicingArgument: false }))
  async bookingChanges(
    @Ctx() ctx: AgentsContext,
    @Arg('since', () => String, { nullable: true }) since?: string | null,
    @Arg('first', () => Int, { defaultValue: CHANGE_FEED_LIMITS.pageDefault, description: `1 to ${CHANGE_FEED_LIMITS.pageMax}` }) first = CHANGE_FEED_LIMITS.pageDefault as number,
    @Arg('agentId', () => ID, { nullable: true }) agentId?: string | null,
    @Arg('family', () => Boolean, { defaultValue: false }) family = false,
  ): Promise<BookingChangePageNode> {
    const limit = checkLimit('first', first, CHANGE_FEED_LIMITS.pageMax);
    const page = await this.feed.changes(await ctx.actor(), { since: since ?? undefined, limit, agentId: agentId ?? undefined, family });
    return BookingChangePageNode.from(page, ctx.agents);
  }

  @Subscription(() => BookingEventNode, {
    description: "The caller's booking events. With `after`, first replays what came after that cursor, then goes live.",
    subscribe: ({ args, context }) =>
      (context as BookingEventsContext).bookingEvents.subscribe((args as { after?: string | null }).after ?? undefined),
  })
  async bookingEvents(
    @Root() event: BookingEventView,
    @Ctx() ctx: AgentsContext,
    @Arg('after', () => String, { nullable: true }) _after?: string | null,
  ): Promise<BookingEventNode> {
    return Object.assign(new BookingEventNode(), {
      cursor: event.cursor,
      id: publicEventId(event.cursor),
      type: event.type,
      createdAt: event.createdAt,
      booking: await BookingNode.ownedOne(event.booking, ctx.agents),
      previous: event.previous && Object.assign(new PreviousRangeNode(), event.previous),
    });
  }
}
