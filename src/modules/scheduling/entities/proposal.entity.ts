import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property, Trigger } from '@mikro-orm/decorators/legacy';
import { PROPOSALS_PENDING_PER_TARGET_LIMIT_BODY } from '../../../../migrations/Migration20261126000000_agent_family_limits.js';
import { Agent } from './agent.entity.js';
import { Booking } from './booking.entity.js';

export const PROPOSAL_STATUSES = ['pending', 'accepted', 'declined', 'withdrawn'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** A proposer asks a target agent to hand over a slot; accepted, it becomes the proposer's booking. */
@Entity({ tableName: 'proposals' })
@Check({ name: 'proposals_range_check', expression: 'ends_at > starts_at' })
@Check({ name: 'proposals_distinct_agents_check', expression: 'proposer_agent_id <> target_agent_id' })
@Check({ name: 'proposals_status_check', expression: `"status" in ('pending', 'accepted', 'declined', 'withdrawn')` })
@Index({ name: 'proposals_proposer_idx', properties: ['proposer', 'createdAt'] })
@Index({ name: 'proposals_target_idx', properties: ['target', 'createdAt'] })
// Pending proposals from one proposer to one target are at most PENDING_PROPOSALS_MAX (see the migration).
@Index({
  name: 'proposals_pending_pair_idx',
  expression: `create index proposals_pending_pair_idx on proposals (proposer_agent_id, target_agent_id) where status = 'pending'`,
})
@Trigger({ name: 'proposals_pending_per_target_limit', timing: 'before', events: ['insert'], forEach: 'row', body: PROPOSALS_PENDING_PER_TARGET_LIMIT_BODY })
export class Proposal {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Agent, { fieldName: 'proposer_agent_id', deleteRule: 'cascade' })
  proposer!: Agent;

  @ManyToOne(() => Agent, { fieldName: 'target_agent_id', deleteRule: 'cascade' })
  target!: Agent;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  startsAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  endsAt!: Date;

  @Property({ type: 'string', length: 16, default: 'pending' })
  status: ProposalStatus = 'pending';

  /** The booking the proposer holds since the proposal was accepted. */
  @ManyToOne(() => Booking, { nullable: true, deleteRule: 'set null' })
  booking: Booking | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  decidedAt: Date | null = null;
}
