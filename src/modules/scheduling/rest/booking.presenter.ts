import type { BookingView } from '../booking.service.js';
import type { Slot } from '../recurrence.js';

/** Seed 000 `BookingItem`, times in UTC. */
export function presentBooking(booking: BookingView) {
  return {
    id: booking.id,
    agentId: booking.agentId,
    startsAt: booking.startsAt.toISOString(),
    endsAt: booking.endsAt.toISOString(),
    status: booking.status,
    rrule: booking.rrule,
    warningSentAt: booking.warningSentAt?.toISOString() ?? null,
    createdAt: booking.createdAt.toISOString(),
  };
}

export function presentSlot(slot: Slot) {
  return { startsAt: slot.startsAt.toISOString(), endsAt: slot.endsAt.toISOString() };
}
