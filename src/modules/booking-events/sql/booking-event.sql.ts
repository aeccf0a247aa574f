import { namedStatement } from '../../../platform/db/statements.js';
import type { BookingItem, PreviousRange } from '../../bookings/index.js';
import type { BookingEventType } from '../entities/booking-event.entity.js';

export interface BookingEventRow {
  id: string;
  agent_id: string;
  type: BookingEventType;
  booking: BookingItem;
  previous: PreviousRange | null;
  created_at: Date | string;
}

/**
 * An agent's events after a cursor, oldest first (replay and catching up), over `booking_events_agent_idx`.
 * The order names the table's column: a bare `order by id` would sort the text output column
 * `id::text` (10 before 9; test/support/sql-name-shadowing.ts holds every statement to this).
 */
export const EVENTS_AFTER = namedStatement<[agentId: string, after: string, limit: number], BookingEventRow>(
  'booking_events_after',
  `select e.id::text as id, e.agent_id, e.type, e.booking, e.previous, e.created_at from booking_events e
    where e.agent_id = $1 and e.id > $2::bigint
    order by e.id
    limit $3`,
);

/** The newest cursor of each agent (one index probe each): where a live stream starts, and the check for lost announcements. */
export const LATEST_EVENTS = namedStatement<[agentIds: string[]], { agent_id: string; latest: string | null }>(
  'booking_events_latest',
  `select a.id as agent_id, (select max(e.id) from booking_events e where e.agent_id = a.id)::text as latest
     from unnest($1::uuid[]) as a(id)`,
);

/** The log's newest event id, for the event-lag metric (the primary key's last entry). */
export const NEWEST_EVENT = namedStatement<[], { newest: string | null }>('booking_events_newest', 'select max(id)::text as newest from booking_events');

/** What one `booking_changes` row is (see sql/booking-changes.function.ts). */
export type BookingChangeKind = 'change' | 'head' | 'expired' | 'unknown_cursor' | 'too_many';

export interface BookingChangeRow {
  change_kind: BookingChangeKind;
  cursor: string | null;
  agent_id: string | null;
  type: string | null;
  occurred_at: Date | string | null;
  booking_id: string | null;
  current_booking: BookingItem | null;
  gone: 'removed' | 'transferred' | null;
}

/**
 * A change-feed page (or its head, or why there is none) in one round trip. Either `agents` (feeds
 * readable without locks: one agent's) or `familyOf` and its parent (the caller's family feed, read
 * under the members' row locks).
 */
export const BOOKING_CHANGES = namedStatement<
  [agents: string[] | null, familyOf: string | null, familyParent: string | null, since: string | null, limit: number, familyMax: number],
  BookingChangeRow
>(
  'booking_changes',
  `select c.change_kind, c.event_id::text as cursor, c.event_agent_id as agent_id, c.event_type as type, c.occurred_at,
          c.booking_id, c.current_booking, c.gone
     from booking_changes($1::uuid[], $2::uuid, $3::uuid, $4::bigint, $5::int, $6::int) c
    order by c.event_id`,
);

/** An agent whose feed a caller names: its relation to the caller is decided in agents/access.ts. */
export const FEED_AGENT = namedStatement<[agentId: string], { id: string; parent_id: string | null }>(
  'booking_feed_agent',
  'select a.id, a.parent_id from agents a where a.id = $1',
);

/** One retention batch (see sql/prune-booking-events.function.ts). */
export const PRUNE_EVENTS = namedStatement<[before: Date, after: string, batch: number, at: Date], { deleted: number; read_through: string; done: boolean }>(
  'prune_booking_events',
  'select p.deleted, p.read_through::text as read_through, p.done from prune_booking_events($1, $2::bigint, $3::int, $4) p',
);
