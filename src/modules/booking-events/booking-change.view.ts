import type { BookingItem } from '../bookings/index.js';

/** Why a change carries no booking: it is no longer on that agent's calendar. */
export type GoneReason = 'transferred' | 'removed';

/**
 * One entry of a change feed, as REST, GraphQL and MCP answer it: an event of the log (any type it
 * holds, the scheduler's too) with the booking as it is now, or a tombstone when the booking is no
 * longer on the calendar of the agent the event is for (`transferred` to another agent, or `removed`).
 * A cancelled booking stays (soft cancel): it comes with `status: cancelled`.
 */
export interface BookingChange {
  /** The event id: the `since` to pass for what follows, the `after` of `bookingEvents`, `webhook-cursor`. */
  cursor: string;
  type: string;
  /** When the event happened (ISO, UTC). */
  occurredAt: string;
  /** Whose calendar it happened on (in a family feed, one of several). */
  agentId: string;
  booking: BookingItem | null;
  deleted: { id: string; reason: GoneReason } | null;
}

export interface BookingChangePage {
  /** In cursor order, which is commit order for each agent. */
  changes: BookingChange[];
  /** Keep it and pass it as `since` next time: the last change's cursor, or `since` when none came. */
  nextSince: string;
  /** More changes follow right away (the page was full). */
  hasMore: boolean;
}
