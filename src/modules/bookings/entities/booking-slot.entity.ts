import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';
import { Booking } from './booking.entity.js';

/**
 * One concrete, live occurrence of a confirmed (or held) booking: a single booking has one slot, a recurring one a
 * slot per occurrence up to the horizon. Each blocks its range widened by its agent's buffers when it was written
 * (`blocked_from`, `blocked_until`); the exclusion constraint over those ranges is what refuses overlaps and buffer
 * conflicts, for single, recurring and held bookings alike; cancelling deletes the slots.
 */
@Entity({ tableName: 'booking_slots' })
// MikroORM introspects an exclusion constraint as a check; declaring it so keeps the schema diff
// honest. The migration that creates it is the source of truth.
@Check({
  name: 'booking_slots_no_overlap',
  expression: "EXCLUDE USING gist (agent_id WITH =, tstzrange(blocked_from, blocked_until, '[)'::text) WITH &&)",
})
@Check({ name: 'booking_slots_blocked_check', expression: 'blocked_from <= starts_at and blocked_until >= ends_at' })
// Availability reads an agent's blocked ranges of a window in end order (disjoint: start order too), index-only.
@Index({
  name: 'booking_slots_agent_blocked_idx',
  expression: 'create index booking_slots_agent_blocked_idx on booking_slots (agent_id, blocked_until) include (blocked_from, hold_id, starts_at)',
})
// The held slots of an agent, for the writers' purge of expired holds (booking_purge_expired_holds): most agents have none.
@Index({
  name: 'booking_slots_held_idx',
  expression: 'create index booking_slots_held_idx on booking_slots (agent_id) where hold_id is not null',
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

  @Property({ type: 'Date', columnType: 'timestamptz' })
  blockedFrom!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  blockedUntil!: Date;

  /** While the booking is held: its hold (no foreign key: the booking's own is enough). */
  @Property({ type: 'uuid', nullable: true })
  holdId: string | null = null;
}
