import type { ConsoleBookingEventsSubscription, WeekSlotsQuery } from '../generated/console/graphql.js';
import { addDays } from './time.js';

/** One of the caller's booking events, as the console's subscription selects it. */
export type LiveEvent = ConsoleBookingEventsSubscription['bookingEvents'];

/** One live occurrence on the week's grid, with its booking. */
export type WeekSlot = WeekSlotsQuery['bookedSlots'][number];

/** Whether an event leaves the week's slots unknown without asking the server. */
export function needsReload(event: LiveEvent): boolean {
  if (event.type === 'booking.created') return event.booking.rrule !== null;
  return event.type !== 'booking.cancelled' && event.type !== 'booking.reminder';
}

/** The week's slots after an event that spells out its change (see `needsReload`). */
export function applyEvent(slots: WeekSlot[], event: LiveEvent, weekStart: Date): WeekSlot[] {
  const { agentId: _agentId, ...booking } = event.booking;
  if (event.type === 'booking.cancelled') return slots.filter((slot) => slot.booking.id !== booking.id);
  if (event.type !== 'booking.created') return slots;
  const inWeek = new Date(booking.startsAt) < addDays(weekStart, 7) && new Date(booking.endsAt) > weekStart;
  if (!inWeek || slots.some((slot) => slot.booking.id === booking.id)) return slots;
  return [...slots, { startsAt: booking.startsAt, endsAt: booking.endsAt, booking }].sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt));
}
