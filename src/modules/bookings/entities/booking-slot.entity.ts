import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';
import { Booking } from './booking.entity.js';

/**
 * One concrete, live occurrence of a confirmed booking: a single booking has one slot, a recurring
 * one a slot per occurrence up to the horizon. The exclusion constraint over this table is what
 * refuses overlaps, for single and recurring bookings alike; cancelling deletes the slots.
 */
@Entity({ tableName: 'booking_slots' })
// MikroORM introspects an exclusion constraint as a check; declaring it so keeps the schema diff
// honest. The migration that creates it is the source of truth.
@Check({
  name: 'booking_slots_no_overlap',
  expression: "EXCLUDE USING gist (agent_id WITH =, tstzrange(starts_at, ends_at, '[)'::text) WITH &&)",
})
// Availability reads an agent's slots of a window in end order (disjoint slots: start order too), index-only.
@Index({
  name: 'booking_slots_agent_ends_idx',
  expression: 'create index booking_slots_agent_ends_idx on booking_slots (agent_id, ends_at) include (starts_at)',
})
export class BookingSlot {
  @ManyToOne(() => Booking, { primary: true, deleteRule: 'cascade' })
  booking!: Booking;

  @PrimaryKey({ type: 'Date', columnType: 'timestamptz' })
  startsAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  endsAt!: Date;

  @ManyToOne(() => Agent, { deleteRule: 'cascade' })
  agent!: Agent;
}
