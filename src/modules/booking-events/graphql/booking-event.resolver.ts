import { Arg, Field, ID, Int, ObjectType, Resolver, Root, Subscription } from 'type-graphql';
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
      previous: event.previous && Object.assign(new PreviousRangeNode(), event.previous),
    });
  }
}
