import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';

export const BOOKING_EVENT_TYPES = ['booking.created', 'booking.cancelled', 'booking.transferred', 'booking.reminder', 'booking.rescheduled'] as const;
export type BookingEventType = (typeof BOOKING_EVENT_TYPES)[number];

/**
 * The booking event log and transactional outbox. `id` is the cursor shared by subscriptions, webhook
 * deliveries and the change feed; rows are written only by the `record_booking_event` SQL function and
 * deleted only by `prune_booking_events` (after BOOKING_EVENTS_RETENTION_DAYS).
 */
@Entity({ tableName: 'booking_events' })
@Check({
  name: 'booking_events_type_check',
  expression: `"type" in (${BOOKING_EVENT_TYPES.map((type) => `'${type}'`).join(', ')})`,
})
@Index({ name: 'booking_events_agent_idx', properties: ['agent', 'id'] })
export class BookingEvent {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  /** The agent the event is for (the booking's owner, or the old owner of a transferred one). */
  @ManyToOne(() => Agent, { deleteRule: 'cascade' })
  agent!: Agent;

  @Property({ type: 'string', length: 32 })
  type!: BookingEventType;

  @Property({ type: 'uuid' })
  bookingId!: string;

  /** The booking as a BookingItem at the time of the event. */
  @Property({ type: 'json', columnType: 'jsonb' })
  booking!: Record<string, unknown>;

  /** booking.rescheduled: the range before the move (`{bookingId, startsAt, endsAt, version}`). */
  @Property({ type: 'json', columnType: 'jsonb', nullable: true })
  previous: Record<string, unknown> | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt!: Date;
}
