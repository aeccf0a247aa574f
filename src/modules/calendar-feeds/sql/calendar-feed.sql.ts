import { namedStatement } from '../../../platform/db/statements.js';

/** One row per booking of the feed, or one row with null booking columns when the feed has none. */
export interface CalendarFeedRow {
  feed_agent_id: string;
  agent_name: string;
  id: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  status: 'confirmed' | 'cancelled' | null;
  rrule: string | null;
  /** ISO instants of the occurrences removed from the series. */
  exdates: string[] | null;
  created_at: Date | null;
  cancelled_at: Date | null;
  /** The booking's version: the VEVENT's SEQUENCE. */
  version: number | null;
}

/**
 * A whole feed request in one round trip: the token's feed and agent, and, when the token is the
 * calendar's own (`agentId`), its bookings: confirmed ones whose last slot ended after `since`, and
 * cancellations made after `since`. Holds are left out: a reservation of a few minutes that a calendar app
 * polling every quarter of an hour would mostly show after it expired (their time is busy in free/busy). Calendar apps poll every few minutes, so the feed never costs a
 * second statement. At most `limit` bookings: live ones first, each group latest-ending first, so a
 * truncated feed loses old cancellations before anything ahead. No row: the token is unknown.
 */
export const CALENDAR_FEED = namedStatement<[tokenHash: string, agentId: string | null, since: Date, limit: number], CalendarFeedRow>(
  'calendar_feed',
  `select f.agent_id as feed_agent_id, a.name as agent_name,
          b.id, b.starts_at, b.ends_at, b.status, b.rrule, b.exdates, b.created_at, b.cancelled_at, b.version
     from calendar_feeds f
     join agents a on a.id = f.agent_id
     left join lateral (
       select * from (
         select b.id, b.starts_at, b.ends_at, b.status, b.rrule, b.exdates, b.created_at, b.cancelled_at, b.version,
                coalesce(b.live_until, b.ends_at) as relevant_until
           from bookings b
          where b.agent_id = f.agent_id and b.status = 'confirmed'
            and (b.live_until >= $3 or (b.live_until is null and b.ends_at >= $3))
         union all
         select b.id, b.starts_at, b.ends_at, b.status, b.rrule, b.exdates, b.created_at, b.cancelled_at, b.version,
                b.cancelled_at as relevant_until
           from bookings b
          where b.agent_id = f.agent_id and b.status = 'cancelled' and b.cancelled_at >= $3
       ) listed
       where f.agent_id = $2::uuid
       order by listed.status = 'confirmed' desc, listed.relevant_until desc, listed.id
       limit $4
     ) b on true
    where f.token_hash = $1`,
  { servedByReplica: true },
);
