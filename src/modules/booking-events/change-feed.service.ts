import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import type { Actor } from '../../platform/auth/actor.js';
import type { Clock } from '../../platform/clock.js';
import { retryTransient } from '../../platform/db/pg-errors.js';
import type { Statements } from '../../platform/db/statements.js';
import { echo } from '../../platform/echo.js';
import { AppError } from '../../platform/errors.js';
import { isoFromTimestamptz } from '../../platform/db/pg-timestamp.js';
import type { Logger } from '../../platform/logger.js';
import { isUuid } from '../../platform/uuid.js';
import { agentOf, mayReadChangeFeed, type AgentRecord } from '../agents/index.js';
import type { BookingChange, BookingChangePage } from './booking-change.view.js';
import { BOOKING_CHANGES, FEED_AGENT, PRUNE_EVENTS, type BookingChangeRow } from './sql/booking-event.sql.js';

export const CHANGE_FEED_LIMITS = {
  pageDefault: SCHEDULING_LIMITS.pageDefault,
  pageMax: SCHEDULING_LIMITS.pageMax,
  /**
   * Agents in one family feed (the caller and its children). A family read locks every member's row
   * and reads up to a page from each; a larger family follows its children's feeds one by one
   * (`agentId`), which need no locks.
   */
  familyMaxAgents: 100,
} as const;

/** Events deleted per retention statement (each its own transaction). */
const PRUNE_BATCH = 1_000;

/** An event id: what `since`, `after` and `webhook-cursor` carry (a bigint, written in decimal). */
export const EVENT_CURSOR = { pattern: '^[0-9]{1,18}$', description: 'an event cursor (decimal digits)' } as const;
const CURSOR_PATTERN = new RegExp(EVENT_CURSOR.pattern);

/** Which feed: the caller's own (neither), one agent's whose feed the caller may read, or the caller's family. */
export interface FeedScope {
  agentId?: string | undefined;
  family?: boolean | undefined;
}

export interface ChangesQuery extends FeedScope {
  /** Absent: no changes, and `nextSince` is the feed's head (start following from now). */
  since?: string | undefined;
  limit: number;
}

function expired(retentionDays: number): AppError {
  return new AppError(
    'cursor_expired',
    `events after this cursor are no longer kept (they are kept ${retentionDays} days): list the calendar again ` +
      '(GET /api/bookings, GraphQL bookings, MCP list_bookings), then follow the feed from a new cursor (ask without since for its head)',
  );
}

const unknownCursor = (field: string) => AppError.validation({ [field]: 'is not a cursor this server handed out: ask without since for the head of the feed' });

/**
 * The change feed: every event of an agent's bookings (or of a family's) after a cursor, in commit order,
 * with each booking as it is now. The cursor is the event id that `bookingEvents(after:)` takes and every
 * webhook delivery carries, so the three ways of following a calendar resume from one another. Also the
 * log's retention (BOOKING_EVENTS_RETENTION_DAYS): what is older is deleted, and a cursor from before
 * what is kept answers `cursor_expired`.
 */
export class BookingChangeFeed {
  constructor(
    private readonly statements: Statements,
    private readonly clock: Clock,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  async changes(caller: Actor, query: ChangesQuery): Promise<BookingChangePage> {
    const actor = agentOf(caller);
    if (query.since !== undefined && !CURSOR_PATTERN.test(query.since)) {
      throw AppError.validation({ since: `must be ${EVENT_CURSOR.description}: a nextSince, a webhook-cursor or an event cursor (not ${echo(query.since)})` });
    }
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > CHANGE_FEED_LIMITS.pageMax) {
      throw AppError.validation({ limit: `must be an integer from 1 to ${CHANGE_FEED_LIMITS.pageMax}` });
    }
    const scope = await this.scope(actor, query);
    // One more than the page: whether more follow.
    const rows = await this.read(scope, query.since ?? null, query.limit + 1);
    const refusal = refusalOf(rows[0], this.retentionDays, 'since');
    if (refusal) throw refusal;
    if (query.since === undefined) return { changes: [], nextSince: rows[0]?.cursor ?? '0', hasMore: false };
    const changes = rows.slice(0, query.limit).map(toChange);
    return { changes, nextSince: changes.at(-1)?.cursor ?? query.since, hasMore: rows.length > query.limit };
  }

  /** Whether an agent's events after `cursor` are all still kept (a subscription's `after`); throws `cursor_expired` if not. */
  async checkCursor(agentId: string, cursor: string, field: string): Promise<void> {
    const [row] = await this.statements.rows(BOOKING_CHANGES, [[agentId], null, null, cursor, 0, CHANGE_FEED_LIMITS.familyMaxAgents]);
    const refusal = refusalOf(row, this.retentionDays, field);
    if (refusal) throw refusal;
  }

  /**
   * The retention job: deletes the events that happened more than BOOKING_EVENTS_RETENTION_DAYS ago, a
   * batch per transaction, oldest first. Answers how many it deleted.
   */
  async prune(): Promise<number> {
    const now = this.clock.now();
    const before = new Date(now.getTime() - this.retentionDays * 86_400_000);
    let deleted = 0;
    for (let after = '0'; ; ) {
      const [batch] = await retryTransient(() => this.statements.rows(PRUNE_EVENTS, [before, after, PRUNE_BATCH, now]));
      deleted += batch!.deleted;
      after = batch!.read_through;
      if (batch!.done) break;
    }
    if (deleted > 0) this.logger.info({ deleted, before }, 'deleted booking events past their retention');
    return deleted;
  }

  private async scope(actor: AgentRecord, query: FeedScope): Promise<{ agents: string[] } | { familyOf: AgentRecord }> {
    if (query.family && query.agentId !== undefined) throw AppError.validation({ family: 'cannot be combined with agentId: a family feed is the caller’s own' });
    if (query.family) return { familyOf: actor };
    if (query.agentId === undefined || query.agentId === actor.id) return { agents: [actor.id] };
    const agent = isUuid(query.agentId) ? await this.statements.one(FEED_AGENT, [query.agentId]) : undefined;
    if (!agent) throw new AppError('not_found', `no agent ${echo(query.agentId)}`);
    if (!mayReadChangeFeed(actor, { id: agent.id, parentId: agent.parent_id })) {
      throw new AppError('forbidden', "an agent's change feed is read by the agent and its parent only");
    }
    return { agents: [agent.id] };
  }

  private read(scope: { agents: string[] } | { familyOf: AgentRecord }, since: string | null, limit: number): Promise<BookingChangeRow[]> {
    const params =
      'agents' in scope
        ? ([scope.agents, null, null, since, limit, CHANGE_FEED_LIMITS.familyMaxAgents] as const)
        : ([null, scope.familyOf.id, scope.familyOf.parentId, since, limit, CHANGE_FEED_LIMITS.familyMaxAgents] as const);
    // A family read waits on its members' writers; a writer that locks two agents the other way round
    // makes PostgreSQL break the tie (40P01), and the read is simply tried again.
    return retryTransient(() => this.statements.rows(BOOKING_CHANGES, [...params]));
  }
}

function refusalOf(row: BookingChangeRow | undefined, retentionDays: number, field: string): AppError | undefined {
  switch (row?.change_kind) {
    case 'expired':
      return expired(retentionDays);
    case 'unknown_cursor':
      return unknownCursor(field);
    case 'too_many':
      return new AppError(
        'limit_exceeded',
        `a family feed covers at most ${CHANGE_FEED_LIMITS.familyMaxAgents} agents (the caller and its children; this family has ${row.cursor}): follow each child's feed with agentId`,
      );
    default:
      return undefined;
  }
}

function toChange(row: BookingChangeRow): BookingChange {
  return {
    cursor: row.cursor!,
    type: row.type!,
    occurredAt: isoFromTimestamptz(row.occurred_at!),
    agentId: row.agent_id!,
    booking: row.current_booking,
    deleted: row.gone ? { id: row.booking_id!, reason: row.gone } : null,
  };
}
