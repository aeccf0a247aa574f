import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';
import { Hold } from './hold.entity.js';

/** A row's status: the seed's two, and `held` for a hold's booking (holds module) until it is confirmed. */
export type BookingStatus = 'confirmed' | 'cancelled' | 'held';

/**
 * A time range on an agent's calendar, half-open `[startsAt, endsAt)`. With an `rrule` it is the
 * first occurrence of a series. Cancelling keeps the row (audit) and frees its slots.
 */
@Entity({ tableName: 'bookings' })
@Check({ name: 'bookings_range_check', expression: 'ends_at > starts_at' })
@Check({ name: 'bookings_status_check', expression: `"status" in ('confirmed', 'cancelled', 'held')` })
@Check({ name: 'bookings_held_check', expression: `"status" <> 'held' or hold_id is not null` })
@Index({ name: 'bookings_hold_idx', expression: 'create index bookings_hold_idx on bookings (hold_id) where hold_id is not null' })
@Index({ name: 'bookings_agent_starts_idx', properties: ['agent', 'startsAt', 'id'] })
// The booking cap counts an agent's confirmed bookings whose last slot has not ended (a bounded range scan).
@Index({
  name: 'bookings_agent_live_until_idx',
  expression: "create index bookings_agent_live_until_idx on bookings (agent_id, live_until) where status = 'confirmed'",
})
// Reminders due soon are found by a sweep over this index (see ReminderSweep).
@Index({
  name: 'bookings_reminder_due_idx',
  expression: "create index bookings_reminder_due_idx on bookings (starts_at) where status = 'confirmed' and warning_sent_at is null",
})
// The iCalendar feed lists an agent's cancellations of the last 30 days.
@Index({
  name: 'bookings_agent_cancelled_idx',
  expression: "create index bookings_agent_cancelled_idx on bookings (agent_id, cancelled_at) where status = 'cancelled'",
})
// Window reads find the bookings overlapping [from, to) whatever the agent's past holds.
@Index({
  name: 'bookings_agent_range_idx',
  expression: "create index bookings_agent_range_idx on bookings using gist (agent_id, tstzrange(starts_at, ends_at, '[)'))",
})
export class Booking {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Agent, { deleteRule: 'cascade' })
  agent!: Agent;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  startsAt!: Date;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  endsAt!: Date;

  @Property({ type: 'string', length: 16, default: 'confirmed' })
  status: BookingStatus = 'confirmed';

  @Property({ type: 'text', nullable: true })
  rrule: string | null = null;

  /** Occurrence starts removed from the series (EXDATE), as ISO strings. */
  @Property({ type: 'json', columnType: 'jsonb' })
  exdates: string[] = [];

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  warningSentAt: Date | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  cancelledAt: Date | null = null;

  /**
   * End of the last materialised slot (a single booking's own `endsAt`; a series' last occurrence up
   * to the horizon), null when none is left. The cap counts the booking while this is in the future.
   */
  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  liveUntil: Date | null = null;

  /** Raised by a trigger whenever the booking changes (sql/booking-version.trigger.ts); reschedule's concurrency check. */
  @Property({ type: 'integer', default: 1 })
  version: number = 1;

  /** The hold this booking is (status `held`) or came from (confirmed). */
  @ManyToOne(() => Hold, { nullable: true, deleteRule: 'set null', fieldName: 'hold_id' })
  hold: Hold | null = null;
}
