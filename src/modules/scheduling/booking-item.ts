import { toIsoString } from '../../platform/iso-time.js';
import type { BookingView } from './booking.service.js';

/** Seed 000 `BookingItem`, times in UTC: the REST response and the `data.booking` of every event. */
export interface BookingItem {
  id: string;
  agentId: string;
  startsAt: string;
  endsAt: string;
  status: 'confirmed' | 'cancelled';
  rrule: string | null;
  warningSentAt: string | null;
  createdAt: string;
}

export function toBookingItem(booking: BookingView): BookingItem {
  return {
    id: booking.id,
    agentId: booking.agentId,
    startsAt: toIsoString(booking.startsAt),
    endsAt: toIsoString(booking.endsAt),
    status: booking.status,
    rrule: booking.rrule,
    warningSentAt: booking.warningSentAt ? toIsoString(booking.warningSentAt) : null,
    createdAt: toIsoString(booking.createdAt),
  };
}

export function fromBookingItem(item: BookingItem): BookingView {
  return {
    ...item,
    startsAt: new Date(item.startsAt),
    endsAt: new Date(item.endsAt),
    createdAt: new Date(item.createdAt),
    warningSentAt: item.warningSentAt ? new Date(item.warningSentAt) : null,
  };
}
