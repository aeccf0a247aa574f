import type { ConsoleBookingEventsSubscription, WeekSlotsQuery } from '../generated/console/graphql.js';
import { addDays } from './time.js';

/** One of the caller's booking events, as the console's subscription selects it. */
export type LiveEvent = ConsoleBookingEventsSubscription['bookingEvents'];

/** One live occurrence on the week's grid, with its booking. */
export type WeekSlot = WeekSlotsQuery['bookedSlots'][number];

/** A single booking moved in place: the event's booking is the one that was at `previous` (not an occurrence that left a series). */
function movedInPlace(event: LiveEvent): boolean {
  return event.type === 'booking.rescheduled' && event.booking.rrule === null && event.previous?.bookingId === event.booking.id;
}

/** Whether an event leaves the week's slots unknown without asking the server. */
export function needsReload(event: LiveEvent): boolean {
  if (event.type === 'booking.created') return event.booking.rrule !== null;
  if (event.type === 'booking.rescheduled') return !movedInPlace(event);
  return event.type !== 'booking.cancelled' && event.type !== 'booking.reminder';
}

/** The week's slots after an event that spells out its change (see `needsReload`). */
export function applyEvent(slots: WeekSlot[], event: LiveEvent, weekStart: Date): WeekSlot[] {
  const { agentId: _agentId, ...booking } = event.booking;
  if (event.type === 'booking.cancelled') return slots.filter((slot) => slot.booking.id !== booking.id);
  if (event.type !== 'booking.created' && !movedInPlace(event)) return slots;
  // A move is its old slot gone and its new one placed, as a creation places it.
  const others = event.type === 'booking.rescheduled' ? slots.filter((slot) => slot.booking.id !== booking.id) : slots;
  const inWeek = new Date(booking.startsAt) < addDays(weekStart, 7) && new Date(booking.endsAt) > weekStart;
  if (!inWeek || others.some((slot) => slot.booking.id === booking.id)) return others;
  return [...others, { startsAt: booking.startsAt, endsAt: booking.endsAt, booking }].sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt));
}

/**
 * A week (its slots and the agent's live holds) after events that spell out their change, in order.
 * Applying one the week already reflects changes nothing (a creation already there, a cancellation
 * already gone), so a week answered before or after some of them is brought up to the last one seen.
 */
export function withEvents<Week extends { slots: WeekSlot[]; holds: readonly { calendars: readonly { bookingId: string | null }[] }[] }>(week: Week, events: readonly LiveEvent[], weekStart: Date): Week {
  return events.reduce<Week>((current, event) => {
    // A hold confirmed (here, or by its holder through REST or MCP) is a booking.created of a held booking's id.
    const confirmed = (hold: Week['holds'][number]) => event.type === 'booking.created' && hold.calendars.some((calendar) => calendar.bookingId === event.booking.id);
    return { ...current, slots: applyEvent(current.slots, event, weekStart), holds: current.holds.filter((hold) => !confirmed(hold)) };
  }, week);
}
