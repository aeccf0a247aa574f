import type { Slot } from '../recurrence.js';

export { toBookingItem as presentBooking } from '../booking-item.js';

export function presentSlot(slot: Slot) {
  return { startsAt: slot.startsAt.toISOString(), endsAt: slot.endsAt.toISOString() };
}
