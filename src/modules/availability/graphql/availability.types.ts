import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import { AVAILABILITY_LIMITS } from '../availability.service.js';
import type { Slot } from '../../bookings/index.js';
import { PageInfo } from '../../../platform/graphql/page-info.js';

@ObjectType('FreeSlot', { simpleResolvers: true, description: 'A free slot common to every asked calendar: [startsAt, endsAt), `duration` minutes long.' })
export class FreeSlotNode {
  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  static from(slot: Slot): FreeSlotNode {
    return Object.assign(new FreeSlotNode(), { startsAt: slot.startsAt, endsAt: slot.endsAt });
  }
}

@ObjectType({ simpleResolvers: true })
export class FreeSlotEdge {
  constructor(
    node: FreeSlotNode,
    private readonly encode: (node: FreeSlotNode) => string,
  ) {
    this.node = node;
  }

  /** Encoded only when a client asks for it. */
  @Field()
  get cursor(): string {
    return this.encode(this.node);
  }

  @Field(() => FreeSlotNode)
  node: FreeSlotNode;
}

@ObjectType({ simpleResolvers: true })
export class FreeSlotConnection {
  @Field(() => [FreeSlotEdge])
  edges!: FreeSlotEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType('SlotReason', {
  simpleResolvers: true,
  description: 'One reason a slot cannot be taken: `code` names the rule (the error code a writer refuses with), the other fields its cause.',
})
export class SlotReasonNode {
  @Field({
    description:
      'slot_taken, buffer_conflict, outside_working_hours, notice_too_short, too_far_ahead, daily_limit_reached or weekly_limit_reached.',
  })
  code!: string;

  @Field()
  message!: string;

  @Field(() => Date, { nullable: true, description: 'The slot it concerns.' })
  startsAt?: string | null;

  @Field(() => ID, { nullable: true, description: 'The booking in the way.' })
  bookingId?: string | null;

  @Field(() => ID, { nullable: true, description: 'The live hold in the way.' })
  holdId?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Whether that hold is the caller’s own (confirm it to book the time).' })
  heldByCaller?: boolean | null;

  @Field(() => Date, { nullable: true, description: 'notice_too_short: the earliest start the notice allows now.' })
  earliestStartsAt?: string | null;

  @Field(() => Date, { nullable: true, description: 'too_far_ahead: the latest start the advance allows now.' })
  latestStartsAt?: string | null;

  @Field(() => Int, { nullable: true })
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'daily_limit_reached: the agent’s local date.' })
  date?: string | null;

  @Field(() => String, { nullable: true, description: 'weekly_limit_reached: the local Monday of the week.' })
  weekOf?: string | null;
}

@ObjectType('SlotCheck', { simpleResolvers: true, description: 'Why not this slot: whether the caller could take it now, and every reason it could not.' })
export class SlotCheckNode {
  @Field(() => ID)
  agentId!: string;

  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  @Field()
  available!: boolean;

  @Directive(listSize({ assumedSize: AVAILABILITY_LIMITS.maxReasons }))
  @Field(() => [SlotReasonNode])
  reasons!: SlotReasonNode[];
}
