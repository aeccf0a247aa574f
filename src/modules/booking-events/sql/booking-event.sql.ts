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
