/** A hold as every adapter answers it: what `hold_item()` (sql/hold-item.function.ts) writes, its one writer. */
export type HoldStatus = 'held' | 'confirmed' | 'released' | 'expired';
export const HOLD_STATUSES: readonly HoldStatus[] = ['held', 'confirmed', 'released', 'expired'];

export interface HoldItem {
  id: string;
  holderAgentId: string;
  startsAt: string;
  endsAt: string;
  expiresAt: string;
  createdAt: string;
  /** `held` while live; `expired` once `expiresAt` passed unconfirmed (its time was never booked). */
  status: HoldStatus;
  /** Per calendar (agent id order): the booking held there (null once released, or purged after expiry); a confirmed hold's bookings keep their ids. */
  calendars: { agentId: string; bookingId: string | null }[];
}
