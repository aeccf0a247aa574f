import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';
import { Booking } from '../../bookings/index.js';

export const PROPOSAL_STATUSES = ['pending', 'accepted', 'declined', 'withdrawn'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** A proposer asks a target agent to hand over a slot; accepted, it becomes the proposer's booking. */
@Entity({ tableName: 'proposals' })
@Check({ name: 'proposals_range_check', expression: 'ends_at > starts_at' })
@Check({ name: 'proposals_distinct_agents_check', expression: 'proposer_agent_id <> target_agent_id' })
@Check({ name: 'proposals_status_check', expression: `"status" in ('pending', 'accepted', 'declined', 'withdrawn')` })
@Index({ name: 'proposals_proposer_idx', properties: ['proposer', 'createdAt'] })
@Index({ name: 'proposals_target_idx', properties: ['target', 'createdAt'] })
// Pending proposals from one proposer to one target are at most PENDING_PROPOSALS_MAX (sql/pending-proposals-limit.trigger.ts).
@Index({
  name: 'proposals_pending_pair_idx',
  expression: `create index proposals_pending_pair_idx on proposals (proposer_agent_id, target_agent_id) where status = 'pending'`,
})
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
