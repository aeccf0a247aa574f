/** How a page of free slots is presented, the same by REST and MCP (a module view, not an adapter's). */
import { encodeSlotCursor, type AvailabilityPage, type SlotCheck } from './availability.service.js';

/** `{items: [{startsAt, endsAt}], nextCursor}`: the slots in seed 000's OccurrenceSlot shape, and where the next page starts (null on the last). */
export function presentAvailabilityPage(page: AvailabilityPage) {
  const last = page.items.at(-1);
  return {
    items: page.items.map((slot) => ({ startsAt: slot.startsAt.toISOString(), endsAt: slot.endsAt.toISOString() })),
    nextCursor: page.hasNextPage && last ? encodeSlotCursor(last) : null,
  };
}

/** A slot check with its instants in the API's ISO form, the same by REST and MCP. */
export function presentSlotCheck(check: SlotCheck) {
  return { ...check, startsAt: check.startsAt.toISOString(), endsAt: check.endsAt.toISOString() };
}
