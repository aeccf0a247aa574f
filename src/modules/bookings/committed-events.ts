import { toIsoString } from '../../platform/iso-time.js';
import type { BookingEventType } from '../booking-events/index.js';
import type { BookingItem } from './booking.shape.js';

/** booking.rescheduled: where the booking was before the move (for one occurrence, the series it left). */
export interface PreviousRange {
  bookingId: string;
  startsAt: string;
  endsAt: string;
  /** The moved booking's version before the move. */
  version: number;
}

/** A booking event as subscribers and webhooks see it. `cursor` orders the events of one agent. */
export interface BookingEventView {
  cursor: string;
  agentId: string;
  type: BookingEventType;
  /** UTC ISO, as the booking's own times. */
  createdAt: string;
  /** The booking as `booking_item()` wrote it into the event. */
  booking: BookingItem;
  /** booking.rescheduled only. */
  previous: PreviousRange | null;
}

/**
 * How the SQL writers report the events they wrote (all about one booking): each as `record_booking_event`
 * answers it, with the webhook deliveries it queued.
 */
export interface WrittenEvents {
  events: { eventId: string; previousEventId: string | null; agentId: string; type: BookingEventType; deliveries: number }[];
}

/**
 * A committed event as it is announced: with the cursor of the same agent's previous event, so a
 * listener that has not seen that one knows it missed something and reads the log instead.
 */
export interface AnnouncedEvent extends BookingEventView {
  previousCursor: string | null;
}

/** What a write hands over after its commit: its events, and whether webhook deliveries await a job. */
export interface CommittedEvents {
  events: AnnouncedEvent[];
  deliveries: number;
}

/**
 * The events a SQL writer reported, about `booking` (the item it answered, which its events carry); a writer that
 * wrote events about several bookings (one per calendar) hands each its own with `bookingOf`.
 */
export function committedEvents(
  written: WrittenEvents,
  booking: BookingItem | ((agentId: string) => BookingItem),
  at: Date,
  previous: PreviousRange | null = null,
): CommittedEvents {
  const createdAt = toIsoString(at);
  return {
    events: written.events.map((event) => ({
      cursor: event.eventId,
      previousCursor: event.previousEventId,
      agentId: event.agentId,
      type: event.type,
      createdAt,
      booking: typeof booking === 'function' ? booking(event.agentId) : booking,
      previous,
    })),
    deliveries: written.events.reduce((sum, event) => sum + event.deliveries, 0),
  };
}

/** Where a write hands its events after the commit: the live bus of booking events (wired by the composition root). */
export interface EventAnnouncer {
  announce(committed: CommittedEvents): void;
}
