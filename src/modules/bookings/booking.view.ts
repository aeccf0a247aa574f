/**
 * The scheduling module's view of a booking, shared by the services, the SQL statements and every adapter
 * (REST, GraphQL, MCP). It imports no service, so nothing here can close an import circle.
 */
import { toIsoString } from '../../platform/iso-time.js';
import type { BookingEventType } from '../booking-events/index.js';

/** A booking as every adapter presents it (the seed's BookingItem, with Date values). */
export interface BookingView {
  id: string;
  agentId: string;
  startsAt: Date;
  endsAt: Date;
  status: 'confirmed' | 'cancelled';
  rrule: string | null;
  warningSentAt: Date | null;
  createdAt: Date;
}

/** A booking event as subscribers and webhooks see it. `cursor` orders the events of one agent. */
export interface BookingEventView {
  cursor: string;
  agentId: string;
  type: BookingEventType;
  createdAt: Date;
  booking: BookingView;
}

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
