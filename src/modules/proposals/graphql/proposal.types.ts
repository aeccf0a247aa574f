import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { AVAILABILITY_LIMITS as L } from '../../availability/index.js';
import type { ProposalView } from '../proposal.service.js';
import { AgentNode } from '../../agents/index.js';

export enum ProposalRoleFilter {
  incoming = 'incoming',
  outgoing = 'outgoing',
}
registerEnumType(ProposalRoleFilter, { name: 'ProposalRole', description: 'incoming: the caller is the target; outgoing: the proposer.' });

export enum ProposalStatusFilter {
  pending = 'pending',
  accepted = 'accepted',
  declined = 'declined',
  withdrawn = 'withdrawn',
}
registerEnumType(ProposalStatusFilter, { name: 'ProposalStatus' });

@ObjectType('Proposal', { simpleResolvers: true, description: 'A request to transfer the slot [startsAt, endsAt) from the target agent to the proposer.' })
export class ProposalNode {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  proposerAgentId!: string;

  @Field(() => ID)
  targetAgentId!: string;

  @Field(() => AgentNode)
  proposer?: AgentNode;

  @Field(() => AgentNode)
  target?: AgentNode;

  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  @Field(() => ProposalStatusFilter)
  status!: string;

  @Field()
  createdAt!: Date;

  @Field(() => ID, { nullable: true, description: 'The booking the proposer holds since acceptance.' })
  bookingId!: string | null;

  static from(view: ProposalView): ProposalNode {
    return Object.assign(new ProposalNode(), view);
  }
}

@InputType()
export class CreateProposalInput {
  @Field(() => ID)
  targetAgentId!: string;

  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;
}

@InputType({ description: 'The earliest free slot common to the caller and the target inside [from, to), as `availability` finds it.' })
export class ProposeFirstAvailableInput {
  @Field(() => ID)
  targetAgentId!: string;

  @Field(() => Int, { description: `Minutes, ${L.durationMin} to ${L.durationMax}.` })
  duration!: number;

  @Field()
  from!: Date;

  @Field({ description: `At most ${L.maxWindowDays} days after from.` })
  to!: Date;

  @Field(() => Int, { nullable: true, defaultValue: L.granularityDefault, description: `Minutes between candidate starts, ${L.granularityMin} to ${L.granularityMax}.` })
  granularity?: number | null;
}
