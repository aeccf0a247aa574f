import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';

/**
 * A hold: [startsAt, endsAt) reserved on the calendars of `agentIds` for its holder until `expiresAt`; one held
 * booking per calendar (bookings with status `held`, which refer to it). Part of the booking aggregate's schema; the
 * holds module owns what is done with it (its SQL functions in holds/sql write it).
 */
@Entity({ tableName: 'holds' })
@Check({ name: 'holds_range_check', expression: 'ends_at > starts_at' })
@Check({ name: 'holds_calendars_check', expression: 'cardinality(agent_ids) >= 1' })
@Check({ name: 'holds_outcome_check', expression: 'confirmed_at is null or released_at is null' })
@Index({ name: 'holds_holder_idx', expression: 'create index holds_holder_idx on holds (holder_agent_id, created_at desc, id desc)' })
export class Hold {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => Agent, { deleteRule: 'cascade', fieldName: 'holder_agent_id' })
  holder!: Agent;

  @Property({ type: 'uuid[]', columnType: 'uuid[]' })
  agentIds!: string[];

  @Property({ type: 'Date', columnType: 'timestamptz' })
  startsAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  endsAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  confirmedAt: Date | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  releasedAt: Date | null = null;
}
