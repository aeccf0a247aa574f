import { Migration } from '@mikro-orm/migrations';

/**
 * Feed tokens one agent may hold at a time: one per calendar app or device that subscribes, with room
 * to rotate one (create the new, then revoke the old). The trigger below holds this number; changing
 * it takes a new migration, not an edit here.
 */
export const MAX_CALENDAR_FEEDS_PER_AGENT = 10;

/**
 * Kept identical to the `@Trigger` on the CalendarFeed entity (MikroORM compares trigger bodies). The
 * agent's row lock makes concurrent creations of one agent count one after the other.
 */
export const CALENDAR_FEEDS_PER_AGENT_LIMIT_BODY = `
  perform 1 from agents where id = new.agent_id for no key update;
  if (select count(*) from calendar_feeds where agent_id = new.agent_id) >= ${MAX_CALENDAR_FEEDS_PER_AGENT} then
    raise exception 'an agent has at most ${MAX_CALENDAR_FEEDS_PER_AGENT} calendar feeds'
      using errcode = 'check_violation', constraint = 'calendar_feeds_per_agent_limit';
  end if;
  return new;
`;

/**
 * iCalendar feeds: calendar apps poll `GET /api/agents/{id}/calendar.ics?token=…` and cannot send
 * headers, so a feed has a token of its own (`cal_…`), read-only and revocable apart from the agent's
 * API token. Stored as SHA-256 like every secret here; a revoked feed's row is deleted.
 */
export class Migration20261123070000_calendar_feeds extends Migration {
  override up(): void {
    this.addSql(`
      create table calendar_feeds (
        id uuid primary key,
        agent_id uuid not null constraint calendar_feeds_agent_id_foreign references agents (id) on delete cascade,
        token_hash varchar(64) not null constraint calendar_feeds_token_hash_key unique,
        created_at timestamptz not null
      );`);
    this.addSql(`create index calendar_feeds_agent_idx on calendar_feeds (agent_id);`);
    this.addSql(`create function calendar_feeds_calendar_feeds_per_agent_limit_fn() returns trigger language plpgsql as $$
begin${CALENDAR_FEEDS_PER_AGENT_LIMIT_BODY}end;
$$;`);
    this.addSql(`create trigger calendar_feeds_per_agent_limit before insert on calendar_feeds for each row execute function calendar_feeds_calendar_feeds_per_agent_limit_fn();`);
    // The feed lists cancellations for 30 days after they happened: this index finds them.
    this.addSql(`create index bookings_agent_cancelled_idx on bookings (agent_id, cancelled_at) where status = 'cancelled';`);
  }
}
