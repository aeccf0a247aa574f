import { Field, ObjectType } from 'type-graphql';
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
