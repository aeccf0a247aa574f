import { AppError, type ErrorCode } from '../../platform/errors.js';

/** The codes `slot_refusals` answers with, in the order writers refuse by; each is an error code too. */
export const REFUSAL_CODES = [
  'slot_taken',
  'buffer_conflict',
  'outside_working_hours',
  'notice_too_short',
  'too_far_ahead',
  'daily_limit_reached',
  'weekly_limit_reached',
] as const satisfies readonly ErrorCode[];

export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** Why a slot cannot be taken, with what caused it (`slot_refusals`, sql/slot-refusals.function.ts). */
export interface Refusal {
  code: RefusalCode;
  /** The candidate slot (for a series, the occurrence) it concerns. */
  startsAt: string;
  /** The calendar, where an operation spans several. */
  agentId?: string;
  /** `slot_taken`, `buffer_conflict`: the booking in the way, or the live hold. */
  bookingId?: string;
  holdId?: string;
  heldByCaller?: boolean;
  /** `notice_too_short`: the earliest start the notice allows now. */
  earliestStartsAt?: string;
  /** `too_far_ahead`: the latest start the advance allows now. */
  latestStartsAt?: string;
  /** `daily_limit_reached` (`date`, the agent's local date), `weekly_limit_reached` (`weekOf`, its local Monday). */
  limit?: number;
  date?: string;
  weekOf?: string;
}

/** A confirm or release outcome about the hold itself. */
export interface HoldRefusal {
  code: 'hold_expired' | 'hold_released';
  expiresAt?: string;
}

const on = (refusal: Refusal) => (refusal.agentId ? ` on the calendar of agent ${refusal.agentId}` : '');

/** A sentence for a refusal: the same words in an error and in the "why not this slot" answer. */
export function describeRefusal(refusal: Refusal): string {
  switch (refusal.code) {
    case 'slot_taken':
      return refusal.holdId
        ? refusal.heldByCaller
          ? `you hold this time${on(refusal)} (hold ${refusal.holdId}): confirm the hold to book it`
          : `the time is held${on(refusal)} (hold ${refusal.holdId})`
        : `the time range overlaps booking ${refusal.bookingId}${on(refusal)}`;
    case 'buffer_conflict':
      return `the time is free, but the buffer kept around bookings${on(refusal)} overlaps ${refusal.holdId ? `hold ${refusal.holdId}` : `booking ${refusal.bookingId}`}`;
    case 'outside_working_hours':
      return `the slot starting ${refusal.startsAt} is outside the working hours${on(refusal)}`;
    case 'notice_too_short':
      return `the slot starts too soon${on(refusal)}: the minimum notice allows starts from ${refusal.earliestStartsAt}`;
    case 'too_far_ahead':
      return `the slot starts too far ahead${on(refusal)}: the maximum advance allows starts until ${refusal.latestStartsAt}`;
    case 'daily_limit_reached':
      return `the limit of ${refusal.limit} bookings on ${refusal.date} (local date) is reached${on(refusal)}`;
    case 'weekly_limit_reached':
      return `the limit of ${refusal.limit} bookings in the week of ${refusal.weekOf} (local Monday) is reached${on(refusal)}`;
  }
}

/** The error a writer answers for its first refusal: the code names the rule, the message its cause. */
export function refusalError(refusal: Refusal | HoldRefusal): AppError {
  switch (refusal.code) {
    case 'hold_expired':
      return new AppError('hold_expired', `the hold expired${refusal.expiresAt ? ` at ${refusal.expiresAt}` : ''}: its time was never booked; hold it again`);
    case 'hold_released':
      return new AppError('hold_released', 'the hold was released: its time was never booked');
    default:
      return new AppError(refusal.code, describeRefusal(refusal));
  }
}
