import { Directive, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import { BookingNode } from '../../bookings/index.js';
import type { HoldItem, HoldStatus } from '../hold.view.js';
import { HOLD_LIMITS as L } from '../holds.service.js';

@ObjectType('HeldCalendar', { simpleResolvers: true })
export class HeldCalendarNode {
  @Field(() => ID)
  agentId!: string;

  @Field(() => ID, { nullable: true, description: 'The booking held (or confirmed) there; null once released, or expired and purged.' })
  bookingId!: string | null;
}

@ObjectType('Hold', {
  simpleResolvers: true,
  description: 'A slot reserved on one or several calendars for a few minutes; confirmHold turns it into bookings with the same ids.',
})
export class HoldNode {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  holderAgentId!: string;

  @Field(() => Date)
  startsAt!: string;

  @Field(() => Date)
  endsAt!: string;

  @Field(() => Date)
  expiresAt!: string;

  @Field(() => Date)
  createdAt!: string;

  @Field(() => String, { description: '`held` while live, `confirmed`, `released`, or `expired` (its time was never booked).' })
  status!: HoldStatus;

  @Directive(listSize({ assumedSize: L.maxCalendars }))
  @Field(() => [HeldCalendarNode])
  calendars!: HeldCalendarNode[];

  static from(item: HoldItem): HoldNode {
    return Object.assign(new HoldNode(), item);
  }
}

@ObjectType('ConfirmedHold', { simpleResolvers: true })
export class ConfirmedHoldNode {
  @Field(() => HoldNode)
  hold!: HoldNode;

  @Directive(listSize({ assumedSize: L.maxCalendars }))
  @Field(() => [BookingNode], { description: 'The confirmed bookings, with the ids they were held under.' })
  bookings!: BookingNode[];
}

@InputType()
export class CreateHoldInput {
  @Field(() => [ID], { nullable: true, description: `The calendars (1 to ${L.maxCalendars}): the caller’s own and its children’s; the caller’s own when absent.` })
  agentIds?: string[] | null;

  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  @Field(() => Int, { nullable: true, description: `${L.ttlMinSeconds} to ${L.ttlMaxSeconds} seconds; ${L.ttlDefaultSeconds} by default.` })
  ttlSeconds?: number | null;
}
