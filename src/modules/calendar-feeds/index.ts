/**
 * Calendar feeds: read-only iCalendar (RFC 5545) URLs of an agent's bookings.
 *
 * Glossary
 * - calendar feed: a URL with its own token (`cal_…`, stored as SHA-256) that any calendar client can
 *   subscribe to; revoking it ends it.
 * - event: one VEVENT per booking; a series keeps its RRULE with EXDATEs for removed occurrences.
 * - pinned occurrence: an occurrence the feed writes as a RECURRENCE-ID VEVENT at its instant, because calendar
 *   apps would place it elsewhere around a daylight-saving change (a skipped or repeated wall-clock time).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import { CalendarFeedService } from './calendar-feed.service.js';
import { CALENDAR_FEED_CONSTRAINTS } from './constraint-errors.js';
import { CalendarFeed } from './entities/calendar-feed.entity.js';
import { CalendarFeedResolver } from './graphql/calendar-feed.resolver.js';
import { registerCalendarFeedRoutes } from './rest/calendar-feed.routes.js';
import { calendarFeedsPerAgentLimitTrigger } from './sql/calendar-feeds-per-agent-limit.trigger.js';

export const calendarFeedsEntities = [CalendarFeed];
export const calendarFeedsResolvers = [CalendarFeedResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const calendarFeedsSqlDefinitions = [calendarFeedsPerAgentLimitTrigger];

export function createCalendarFeedsModule(deps: { em: EntityManager; clock: Clock; statements: Statements }) {
  registerConstraintErrors(CALENDAR_FEED_CONSTRAINTS);
  const calendarFeeds = new CalendarFeedService(deps.em, deps.clock, deps.statements);
  return {
    calendarFeeds,
    resolvers: [new CalendarFeedResolver(calendarFeeds)],
    registerRoutes: (app: FastifyInstance) => registerCalendarFeedRoutes(app, calendarFeeds),
  };
}
