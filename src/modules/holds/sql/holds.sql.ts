import { namedStatement } from '../../../platform/db/statements.js';
import type { HoldRefusal, Refusal } from '../../availability-rules/index.js';
import type { BookingItem, WrittenEvents } from '../../bookings/index.js';
import type { HoldItem } from '../hold.view.js';

export type HoldCreateOutcome =
  | { hold: HoldItem }
  | { forbidden: string[] }
  | { limitExceeded: true }
  | { capReached: string }
  | { refused: Refusal };

/** A hold on several calendars in one round trip (`hold_create`). */
export const HOLD_CREATE = namedStatement<
  [actorId: string, holdId: string, agentIds: string[], startsAt: Date, endsAt: Date, expiresAt: Date, cap: number, maxLive: number, at: Date],
  { outcome: HoldCreateOutcome }
>(
  'hold_create',
  'select hold_create($1::uuid, $2::uuid, $3::uuid[], $4::timestamptz, $5::timestamptz, $6::timestamptz, $7::int, $8::int, $9::timestamptz) as outcome',
);

export type HoldConfirmOutcome =
  | { missing: true }
  | { forbidden: true }
  | { capReached: string }
  | { refused: Refusal | HoldRefusal }
  | ({ hold: HoldItem; bookings: BookingItem[] } & Partial<WrittenEvents>);

/** Confirm in one round trip (`hold_confirm`). */
export const HOLD_CONFIRM = namedStatement<[actorId: string, holdId: string, cap: number, at: Date], { outcome: HoldConfirmOutcome }>(
  'hold_confirm',
  'select hold_confirm($1::uuid, $2::uuid, $3::int, $4::timestamptz) as outcome',
);

export type HoldReleaseOutcome = { missing: true } | { forbidden: true } | { confirmed: true } | { hold: HoldItem };

/** Release in one round trip (`hold_release`). */
export const HOLD_RELEASE = namedStatement<[actorId: string, holdId: string, at: Date], { outcome: HoldReleaseOutcome }>(
  'hold_release',
  'select hold_release($1::uuid, $2::uuid, $3::timestamptz) as outcome',
);

/** One hold, with its holder (for the access check). */
export const HOLD_BY_ID = namedStatement<[holdId: string, at: Date], { holder_agent_id: string; hold: HoldItem }>(
  'hold_by_id',
  'select h.holder_agent_id, hold_item(h.id, $2::timestamptz) as hold from holds h where h.id = $1::uuid',
);

/** The holder's live holds, newest first (at most the live-hold bound, so the list is bounded by construction). */
export const LIVE_HOLDS_OF = namedStatement<[holderId: string, at: Date, limit: number], { hold: HoldItem }>(
  'live_holds_of',
  `select hold_item(h.id, $2::timestamptz) as hold from holds h
    where h.holder_agent_id = $1::uuid and h.expires_at > $2::timestamptz and h.confirmed_at is null and h.released_at is null
    order by h.created_at desc, h.id desc
    limit $3`,
);
