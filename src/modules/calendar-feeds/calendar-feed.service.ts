import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateToken, sha256Hex } from '../../platform/auth/credentials.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError } from '../../platform/errors.js';
import type { Actor } from '../../platform/auth/actor.js';
import { AGENT_TOKEN_PREFIX, agentOf, requireOwner } from '../agents/index.js';
import { CalendarFeed } from './entities/calendar-feed.entity.js';
import { contentLines, escapeText, localDateTime, utcDateTime, vtimezoneLines } from './icalendar.js';
import { isUuid } from '../../platform/uuid.js';
import { parseRule, RecurrenceError } from '../bookings/index.js';
import { CALENDAR_FEED, type CalendarFeedRow } from './sql/calendar-feed.sql.js';
import { echo } from '../../platform/echo.js';

export { MAX_CALENDAR_FEEDS_PER_AGENT } from './sql/calendar-feeds-per-agent-limit.trigger.js';

export const CALENDAR_FEED_TOKEN_PREFIX = 'cal_';

export const CALENDAR_FEED_LIMITS = {
  /**
   * Bookings (VEVENTs) in one feed. The booking cap (500 by default) bounds an agent's live bookings;
   * the other half is room for the last 30 days' ended bookings and cancellations. A VEVENT is about
   * 300 octets (a series with many EXDATEs more), so a full feed stays around 300 KiB, which every
   * calendar app polls without trouble. Past the bound the oldest cancellations go first, then the
   * longest-ended bookings, and the answer says so (`X-Calendar-Truncated`).
   */
  maxEvents: 1_000,
  /** A cancellation stays in the feed (STATUS:CANCELLED) this long, so subscribed apps see it go. */
  cancelledVisibleDays: 30,
  /** An ended booking stays in the feed this long after its last slot. */
  endedVisibleDays: 30,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;
/** UIDs are globally unique (RFC 5545 3.8.4.7): the booking id, qualified by what issued it. */
const UID_DOMAIN = 'agent-gateway';

export interface CalendarFeedView {
  id: string;
  createdAt: Date;
}

export interface CreatedCalendarFeed {
  feed: CalendarFeedView;
  /** `cal_…`, in clear only in this result. */
  token: string;
  /** Where calendar apps subscribe, relative to the gateway's origin, token included. */
  path: string;
}

export interface RenderedFeed {
  body: string;
  /** Strong validator: a hash of the body, so an unchanged calendar answers 304 whatever changed around it. */
  etag: string;
  events: number;
  truncated: boolean;
}

export function calendarFeedPath(agentId: string, token: string): string {
  return `/api/agents/${agentId}/calendar.ics?token=${encodeURIComponent(token)}`;
}

function toView(feed: CalendarFeed): CalendarFeedView {
  return { id: feed.id, createdAt: feed.createdAt };
}

/**
 * iCalendar feeds of an agent's bookings, for calendar apps that subscribe by URL. Each feed has a
 * token of its own: apps cannot send headers, a URL ends up in their settings and sync logs, so it
 * must be read-only, revocable on its own, and worthless as an API credential (and the reverse).
 */
export class CalendarFeedService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly statements: Statements,
  ) {}

  async create(caller: Actor): Promise<CreatedCalendarFeed> {
    const actor = agentOf(caller);
    const token = generateToken(CALENDAR_FEED_TOKEN_PREFIX);
    const feed = this.em.create(CalendarFeed, { agent: actor.id, tokenHash: sha256Hex(token), createdAt: this.clock.now() });
    try {
      await this.em.flush();
    } catch (error) {
      // Past `calendar_feeds_per_agent_limit` (constraint-errors.ts) the unit of work must not keep the refused feed.
      this.em.clear();
      throw error;
    }
    return { feed: toView(feed), token, path: calendarFeedPath(actor.id, token) };
  }

  async list(caller: Actor): Promise<CalendarFeedView[]> {
    const actor = agentOf(caller);
    const feeds = await this.em.find(CalendarFeed, { agent: actor.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return feeds.map(toView);
  }

  /** The feed's URL stops working at once: its row, the only copy of the token's hash, is gone. */
  async revoke(caller: Actor, feedId: string): Promise<void> {
    const actor = agentOf(caller);
    const feed = isUuid(feedId) ? await this.em.findOne(CalendarFeed, feedId) : null;
    if (!feed) throw new AppError('not_found', `no calendar feed ${echo(feedId)}`);
    requireOwner(actor, feed.agent.id, 'calendar feed');
    await this.em.remove(feed).flush();
  }

  /**
   * The calendar of `agentId` as iCalendar text, for the holder of one of its feed tokens: 401 for a
   * missing or unknown token (an API token included), 403 for another agent's feed token.
   */
  async render(token: string | undefined, agentId: string): Promise<RenderedFeed> {
    if (!token) throw new AppError('unauthorized', 'missing feed token: add ?token=<cal_… token from createCalendarFeed> to the URL');
    if (token.startsWith(AGENT_TOKEN_PREFIX)) {
      throw new AppError('unauthorized', 'an API token is not a feed token: create a calendar feed and use its cal_… token');
    }
    // PostgreSQL answers uuids in lower case; a URL may carry one in either.
    const calendarId = agentId.toLowerCase();
    const now = this.clock.now();
    const since = new Date(now.getTime() - Math.max(CALENDAR_FEED_LIMITS.cancelledVisibleDays, CALENDAR_FEED_LIMITS.endedVisibleDays) * DAY_MS);
    const rows = await this.statements.rows(CALENDAR_FEED, [
      sha256Hex(token),
      isUuid(calendarId) ? calendarId : null,
      since,
      CALENDAR_FEED_LIMITS.maxEvents + 1,
    ]);
    const [first] = rows;
    if (!first) throw new AppError('unauthorized', 'invalid feed token: it is not recognised or was revoked');
    if (first.feed_agent_id !== calendarId) throw new AppError('forbidden', 'the feed token belongs to another agent’s calendar');
    const bookings = rows.filter((row) => row.id !== null);
    const truncated = bookings.length > CALENDAR_FEED_LIMITS.maxEvents;
    const listed = truncated ? bookings.slice(0, CALENDAR_FEED_LIMITS.maxEvents) : bookings;
    const body = renderCalendar(first.agent_name, listed);
    const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
    return { body, etag, events: listed.length, truncated };
  }
}

function renderCalendar(agentName: string, bookings: readonly CalendarFeedRow[]): string {
  const zones = new Set<string>();
  const events = bookings.flatMap((booking) => eventLines(booking, zones));
  return contentLines([
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:-//${UID_DOMAIN}//calendar feed//EN`,
    'CALSCALE:GREGORIAN',
    `X-WR-CALNAME:${escapeText(agentName)}`,
    ...[...zones].sort().flatMap(vtimezoneLines),
    ...events,
    'END:VCALENDAR',
  ]);
}

/** A TZID of UTC is written as UTC times: equivalent, and needs no VTIMEZONE. */
const isUtc = (zone: string) => /^(Etc\/)?(UTC|UCT|GMT|Zulu|Universal)$/i.test(zone);

/**
 * One VEVENT per booking; a series is one VEVENT with its RRULE line and DTSTART zone as stored and
 * its removed occurrences as EXDATEs. Adds the zones it names to `zones`.
 */
function eventLines(booking: CalendarFeedRow, zones: Set<string>): string[] {
  const startsAt = new Date(booking.starts_at!);
  const endsAt = new Date(booking.ends_at!);
  let zone = 'UTC';
  let ruleLine: string | null = null;
  if (booking.rrule) {
    try {
      zone = parseRule(booking.rrule, startsAt).zone;
    } catch (error) {
      // A stored rule that no longer parses answers bad_rrule everywhere else; publishing it would
      // let each app guess. The booking is left out until it is cancelled and created again.
      if (error instanceof RecurrenceError) return [];
      throw error;
    }
    ruleLine = storedRuleLine(booking.rrule);
  }
  const utc = isUtc(zone);
  if (!utc) zones.add(zone);
  const dateTime = (name: string, instants: readonly Date[]) =>
    utc
      ? `${name}:${instants.map(utcDateTime).join(',')}`
      : `${name};TZID=${zone}:${instants.map((instant) => localDateTime(instant, zone)).join(',')}`;
  const exdates = (booking.exdates ?? []).map((date) => new Date(date)).sort((a, b) => a.getTime() - b.getTime());
  const cancelled = booking.status === 'cancelled';
  return [
    'BEGIN:VEVENT',
    `UID:${booking.id}@${UID_DOMAIN}`,
    `DTSTAMP:${utcDateTime(new Date((cancelled ? booking.cancelled_at : null) ?? booking.created_at!))}`,
    // Each revision a booking can have (an occurrence removed, the booking cancelled) raises it.
    `SEQUENCE:${exdates.length + (cancelled ? 1 : 0)}`,
    dateTime('DTSTART', [startsAt]),
    dateTime('DTEND', [endsAt]),
    ...(ruleLine ? [`RRULE:${ruleLine}`] : []),
    ...(ruleLine && exdates.length ? [dateTime('EXDATE', exdates)] : []),
    `STATUS:${cancelled ? 'CANCELLED' : 'CONFIRMED'}`,
    'SUMMARY:Booking',
    'TRANSP:OPAQUE',
    'END:VEVENT',
  ];
}

/** The RRULE line of a stored rule (which parseRule accepted), without its `RRULE:` prefix. */
function storedRuleLine(stored: string): string {
  const line = stored
    .split(/\r?\n/)
    .map((part) => part.trim())
    .find((part) => part && !/^DTSTART[;:]/i.test(part));
  return (line ?? '').replace(/^RRULE:/i, '');
}
