import { Directive, Field, ID, ObjectType } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import { CHANGE_FEED_LIMITS } from '../change-feed.service.js';
import type { AgentLoaders } from '../../agents/index.js';
import { BookingNode } from '../../bookings/index.js';
import type { BookingChange, BookingChangePage, GoneReason } from '../booking-change.view.js';

@ObjectType('DeletedBooking', {
  simpleResolvers: true,
  description: 'A tombstone: the booking is no longer on the calendar of the agent the change is for. Drop it from your copy (a normalized cache evicts `Booking:<id>`).',
})
export class DeletedBookingNode {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: '`transferred` (it now belongs to another agent) or `removed` (it no longer exists).' })
  reason!: GoneReason;
}

@ObjectType('BookingChange', {
  simpleResolvers: true,
  description: 'One event of the change feed, with the booking as it is now (`booking`) or a tombstone (`deleted`); exactly one of the two is set.',
})
export class BookingChangeNode {
  @Field({ description: 'The event id: the `since` that follows this change, the `after` of `bookingEvents`, the `webhook-cursor` of its delivery.' })
  cursor!: string;

  @Field({ description: 'The event type: booking.created, booking.cancelled, booking.transferred, booking.reminder, or any type the log holds.' })
  type!: string;

  @Field(() => Date, { description: 'When the event happened.' })
  occurredAt!: string;

  @Field(() => ID, { description: 'Whose calendar it happened on (several in a family feed).' })
  agentId!: string;

  @Field(() => BookingNode, { nullable: true, description: 'The booking as it is now (a cancelled one stays, `status: cancelled`).' })
  booking!: BookingNode | null;

  @Field(() => DeletedBookingNode, { nullable: true })
  deleted!: DeletedBookingNode | null;

  static from(change: BookingChange, booking: BookingNode | null): BookingChangeNode {
    return Object.assign(new BookingChangeNode(), {
      ...change,
      booking,
      deleted: change.deleted && Object.assign(new DeletedBookingNode(), change.deleted),
    });
  }
}

@ObjectType('BookingChangePage', { simpleResolvers: true })
export class BookingChangePageNode {
  @Directive(listSize({ assumedSize: CHANGE_FEED_LIMITS.pageMax }))
  @Field(() => [BookingChangeNode], { description: 'In cursor order, which is commit order for each agent.' })
  changes!: BookingChangeNode[];

  @Field({ description: 'Keep it; pass it as `since` next time (the last change’s cursor, or `since` when none came).' })
  nextSince!: string;

  @Field({ description: 'The page was full: more changes follow right away.' })
  hasMore!: boolean;

  static async from(page: BookingChangePage, agents: AgentLoaders): Promise<BookingChangePageNode> {
    const bookings = await BookingNode.ownedBy(page.changes.flatMap((change) => (change.booking ? [change.booking] : [])), agents);
    let next = 0;
    const changes = page.changes.map((change) => BookingChangeNode.from(change, change.booking ? bookings[next++]! : null));
    return Object.assign(new BookingChangePageNode(), { ...page, changes });
  }
}
