import type { EntityManager } from '@mikro-orm/postgresql';
import type { BookingEventType } from '../booking-events/index.js';
import { toBookingItem, type BookingEventView, type BookingView } from './booking.view.js';

/** How the SQL write functions report the events they wrote (all about one booking). */
export interface WrittenEvents {
  events: { eventId: string; previousEventId: string | null; agentId: string; type: BookingEventType }[];
  deliveries: number;
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
 * Writes an event in the caller's transaction: the log row (the outbox) and a webhook delivery per
 * matching endpoint. Nothing is announced yet: pass the result to `BookingEventBus.announce` after
 * the commit.
 */
export async function recordBookingEvent(
  tx: EntityManager,
  event: { agentId: string; type: BookingEventType; booking: BookingView; at: Date },
): Promise<CommittedEvents> {
  const [row] = await tx.execute<{ event_id: string; previous_event_id: string | null; deliveries: number }[]>(
    'select event_id::text, previous_event_id::text, deliveries from record_booking_event(?, ?, ?::jsonb, ?)',
    [event.agentId, event.type, JSON.stringify(toBookingItem(event.booking)), event.at],
  );
  return {
    events: [
      {
        cursor: row!.event_id,
        previousCursor: row!.previous_event_id,
        agentId: event.agentId,
        type: event.type,
        createdAt: event.at,
        booking: event.booking,
      },
    ],
    deliveries: row!.deliveries,
  };
}

export function committedEvents(written: WrittenEvents, booking: BookingView, at: Date): CommittedEvents {
  return {
    events: written.events.map((event) => ({
      cursor: event.eventId,
      previousCursor: event.previousEventId,
      agentId: event.agentId,
      type: event.type,
      createdAt: at,
      booking,
    })),
    deliveries: written.deliveries,
  };
}

/** Where a write hands its events after the commit: the live bus of booking events (wired by the composition root). */
export interface EventAnnouncer {
  announce(committed: CommittedEvents): void;
}
