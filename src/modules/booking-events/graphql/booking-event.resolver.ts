import { Arg, Field, ID, ObjectType, Resolver, Root, Subscription } from 'type-graphql';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import { BookingNode, type BookingEventView } from '../../bookings/index.js';
import { publicEventId } from '../event-id.js';

/** The GraphQL context slice of booking events: the caller's subscription. */
export interface BookingEventsContext extends PlatformContext {
  readonly bookingEvents: {
    /** The caller's booking events (replay after `after`, then live); only an agent has them. */
    subscribe(after: string | undefined): Promise<AsyncGenerator<BookingEventView>>;
  };
}

@ObjectType('BookingEvent', { simpleResolvers: true, description: 'Something that happened to one of your bookings.' })
export class BookingEventNode {
  @Field({ description: 'Monotonically increasing; pass it as `after` to resume without gap or duplicate.' })
  cursor!: string;

  @Field(() => ID, { description: 'The webhook-id of the same event (`evt_<cursor>`).' })
  id!: string;

  @Field({ description: 'booking.created, booking.cancelled, booking.transferred or booking.reminder' })
  type!: string;

  @Field(() => Date)
  createdAt!: string;

  @Field(() => BookingNode)
  booking!: BookingNode;
}

@Resolver(() => BookingEventNode)
export class BookingEventResolver {
  @Subscription(() => BookingEventNode, {
    description: "The caller's booking events. With `after`, first replays what came after that cursor, then goes live.",
    subscribe: ({ args, context }) =>
      (context as BookingEventsContext).bookingEvents.subscribe((args as { after?: string | null }).after ?? undefined),
  })
  bookingEvents(@Root() event: BookingEventView, @Arg('after', () => String, { nullable: true }) _after?: string | null): BookingEventNode {
    return Object.assign(new BookingEventNode(), {
      cursor: event.cursor,
      id: publicEventId(event.cursor),
      type: event.type,
      createdAt: event.createdAt,
      booking: BookingNode.from(event.booking),
    });
  }
}
