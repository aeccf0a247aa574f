import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateToken, sha256Hex } from '../../platform/auth/credentials.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError } from '../../platform/errors.js';
import type { Actor } from '../../platform/auth/actor.js';
import { AGENT_TOKEN_PREFIX, agentOf, requireOwner } from '../agents/index.js';
import { CalendarFeed } from './entities/calendar-feed.entity.js';
import { contentLines, escapeText, utcDateTime, vtimezoneLines, wallClockDateTime } from './icalendar.js';
import { isUuid } from '../../platform/uuid.js';
import { feedSeries, irregularOccurrences, parseRule, recurrenceIdOf, RecurrenceError, type ParsedRule } from '../bookings/index.js';
import { CALENDAR_FEED, type CalendarFeedRow } from './sql/calendar-feed.sql.js';
import { echo } from '../../platform/echo.js';

export { MAX_CALENDAR_FEEDS_PER_AGENT } from './sql/calendar-feeds-per-agent-limit.trigger.js';

export const CALENDAR_FEED_TOKEN_PREFIX = 'cal_';

export const CALENDAR_FEED_LIMITS = {
  /**
   * VEVENTs in one feed (a booking is one, a series with pinned occurrences a few more). The booking cap (500 by default) bounds an agent's live bookings;
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
  /**
   * Occurrences that calendar apps would place elsewhere around a daylight-saving change (on a
   * skipped or repeated wall-clock time) are pinned to their instants, a RECURRENCE-ID VEVENT each,
   * from the visible past up to this far ahead: the 366 days a series' slots are booked ahead, and
   * a day more, so that none an app would move by the change's hour into that horizon is missed.
   */
  pinnedAheadDays: 367,
  /**
   * A zone's VTIMEZONE has its changes as a yearly pattern (an RRULE) while they follow one; those
   * that do not are dated one by one from the earliest local time the feed writes in the zone to
   * this many years past the pinned window.
   */
  zoneYearsAhead: 10,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;
/** UIDs are globally unique (RFC 5545 3.8.4.7): the booking id, qualified by what issued it. */
export const UID_DOMAIN = 'agent-gateway';

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
    const window = { from: since, before: new Date(now.getTime() + CALENDAR_FEED_LIMITS.pinnedAheadDays * DAY_MS) };
    const { body, events, truncated } = renderCalendar(first.agent_name, bookings, window);
    const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
    return { body, etag, events, truncated };
  }
}

function renderCalendar(agentName: string, bookings: readonly CalendarFeedRow[], window: FeedWindow): { body: string; events: number; truncated: boolean } {
  // Each zone the feed's series name, with the earliest wall-clock time written in it (its VTIMEZONE starts that year).
  const zones = new Map<string, number>();
  const events: string[][] = [];
  let count = 0;
  let truncated = bookings.length > CALENDAR_FEED_LIMITS.maxEvents;
  for (const booking of bookings) {
    const bookingZones = new Map<string, number>();
    const vevents = bookingEvents(booking, bookingZones, window);
    // A series with pinned occurrences is several VEVENTs: the bound is on VEVENTs, the earliest-listed bookings kept whole.
    if (count + vevents.length > CALENDAR_FEED_LIMITS.maxEvents) {
      truncated = true;
      break;
    }
    count += vevents.length;
    events.push(...vevents);
    for (const [zone, earliest] of bookingZones) zones.set(zone, Math.min(earliest, zones.get(zone) ?? earliest));
  }
  const body = contentLines([
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:-//${UID_DOMAIN}//calendar feed//EN`,
    'CALSCALE:GREGORIAN',
    `X-WR-CALNAME:${escapeText(agentName)}`,
    ...[...zones]
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([zone, earliest]) => vtimezoneLines(zone, new Date(earliest).getUTCFullYear(), window.before.getUTCFullYear() + CALENDAR_FEED_LIMITS.zoneYearsAhead)),
    ...events.flat(),
    'END:VCALENDAR',
  ]);
  return { body, events: count, truncated };
}

/** A TZID of UTC is written as UTC times: equivalent, and needs no VTIMEZONE. */
const isUtc = (zone: string) => /^(Etc\/)?(UTC|UCT|GMT|Zulu|Universal)$/i.test(zone);

/** Where occurrences on a skipped or repeated wall-clock time are pinned (`irregularOccurrences`). */
interface FeedWindow {
  from: Date;
  before: Date;
}

/**
 * The VEVENTs of one booking, each as its content lines; adds the zone a series names to `zones`, with
 * the wall-clock time its VEVENT starts at.
 *
 * A single booking is one VEVENT in UTC. A series is one VEVENT with DTSTART on the zone's wall clock
 * (where the rule's steps start), DURATION (exact, so a DTSTART or end on an irregular wall-clock time
 * cannot stretch every occurrence), the rule with UNTIL in UTC and its removed occurrences as EXDATEs
 * named by the wall-clock time the rule gave them. Around it, what calendar apps would otherwise read
 * differently from the gateway: each occurrence on a wall-clock time that a daylight-saving change
 * skips or repeats, pinned to its instant by a RECURRENCE-ID VEVENT; and a booking that starts off its
 * rule (a Saturday start of a weekdays rule), whose start is an event of its own while the series'
 * VEVENT starts at the rule's first occurrence.
 */
function bookingEvents(booking: CalendarFeedRow, zones: Map<string, number>, window: FeedWindow): string[][] {
  const id = booking.id!;
  const slot = { startsAt: new Date(booking.starts_at!), endsAt: new Date(booking.ends_at!) };
  const cancelled = booking.status === 'cancelled';
  const common = (uid: string) => [
    `UID:${uid}@${UID_DOMAIN}`,
    `DTSTAMP:${utcDateTime(new Date((cancelled ? booking.cancelled_at : null) ?? booking.created_at!))}`,
    // The booking's version less one (RFC 5545: a new component's SEQUENCE is 0): every change (moved, an
    // occurrence removed, cancelled) raises the version, so the SEQUENCE never goes down.
    `SEQUENCE:${(booking.version ?? 1) - 1}`,
  ];
  const closing = [`STATUS:${cancelled ? 'CANCELLED' : 'CONFIRMED'}`, 'SUMMARY:Booking', 'TRANSP:OPAQUE', 'END:VEVENT'];
  const single = (uid: string, status: string[] = closing) => [
    'BEGIN:VEVENT',
    ...common(uid),
    `DTSTART:${utcDateTime(slot.startsAt)}`,
    `DTEND:${utcDateTime(slot.endsAt)}`,
    ...status,
  ];
  if (!booking.rrule) return [single(id)];

  let parsed: ParsedRule;
  try {
    parsed = parseRule(booking.rrule, slot.startsAt);
  } catch (error) {
    // A stored rule that no longer parses answers bad_rrule everywhere else; publishing it would
    // let each app guess. The booking is left out until it is cancelled and created again.
    if (error instanceof RecurrenceError) return [];
    throw error;
  }
  const excluded = (booking.exdates ?? []).map((date) => new Date(date)).sort((a, b) => a.getTime() - b.getTime());
  const startExcluded = excluded.some((date) => date.getTime() === slot.startsAt.getTime());
  const series = feedSeries(parsed, slot);
  if (!series) {
    // The rule gives nothing after the start: the series is its first occurrence.
    return [single(id, startExcluded ? ['STATUS:CANCELLED', ...closing.slice(1)] : closing)];
  }

  const { first, ruleLine } = series;
  const utc = isUtc(parsed.zone);
  if (!utc) zones.set(parsed.zone, first.recurrenceId.getTime());
  const wallClock = (name: string, floatings: readonly Date[]) =>
    utc ? `${name}:${floatings.map(utcDateTime).join(',')}` : `${name};TZID=${parsed.zone}:${floatings.map(wallClockDateTime).join(',')}`;
  const offRuleStart = first.startsAt.getTime() !== slot.startsAt.getTime();
  const ruleExcluded = excluded.filter((date) => date.getTime() >= first.startsAt.getTime() && !(offRuleStart && date.getTime() === slot.startsAt.getTime()));
  const exdates = ruleExcluded.map((date) => recurrenceIdOf(parsed, slot, date));
  const duration = `DURATION:${exactDuration(slot.endsAt.getTime() - slot.startsAt.getTime())}`;
  const master = [
    'BEGIN:VEVENT',
    ...common(id),
    wallClock('DTSTART', [first.recurrenceId]),
    duration,
    `RRULE:${ruleLine}`,
    ...(exdates.length ? [wallClock('EXDATE', exdates)] : []),
    ...closing,
  ];
  const pinned = utc
    ? []
    : irregularOccurrences(parsed, slot, window, excluded).filter(
        (occurrence) => occurrence.startsAt >= first.startsAt && !(offRuleStart && occurrence.startsAt.getTime() === slot.startsAt.getTime()),
      );
  const overrides = pinned.map((occurrence) => [
    'BEGIN:VEVENT',
    ...common(id),
    wallClock('RECURRENCE-ID', [occurrence.recurrenceId]),
    `DTSTART:${utcDateTime(occurrence.startsAt)}`,
    duration,
    ...closing,
  ]);
  const start = offRuleStart && !startExcluded ? [single(`${id}-start`)] : [];
  return [master, ...overrides, ...start];
}

/** An exact DURATION (RFC 5545 3.3.6: hours, minutes and seconds are exact; days are not across a daylight-saving change). */
function exactDuration(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  const [hours, minutes, rest] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
  return `PT${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${rest || (!hours && !minutes) ? `${rest}S` : ''}`;
}
