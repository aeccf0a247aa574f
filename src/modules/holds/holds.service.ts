import { randomUUID } from 'node:crypto';
import type { Actor } from '../../platform/auth/actor.js';
import type { Clock } from '../../platform/clock.js';
import { retryTransient } from '../../platform/db/pg-errors.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError, constraintErrorOf, type FieldErrors } from '../../platform/errors.js';
import { isUuid } from '../../platform/uuid.js';
import { agentOf, notActingFor, requireOwner } from '../agents/index.js';
import { refusalError } from '../availability-rules/index.js';
import { checkRange, committedEvents, type BookingItem, type EventAnnouncer } from '../bookings/index.js';
import type { HoldItem } from './hold.view.js';
import { HOLD_BY_ID, HOLD_CONFIRM, HOLD_CREATE, HOLD_RELEASE, LIVE_HOLDS_OF } from './sql/holds.sql.js';

/** The bounds of holds; /openapi.json, the GraphQL descriptions and the MCP schemas state the same. */
export const HOLD_LIMITS = {
  ttlDefaultSeconds: 300,
  ttlMinSeconds: 10,
  /** A hold is a reservation for the minutes a booking flow takes, not a tentative booking. */
  ttlMaxSeconds: 900,
  /** Calendars one hold spans. */
  maxCalendars: 20,
  /** Live holds one holder may have at once (so its list is bounded). */
  maxLiveHolds: 100,
} as const;

export interface CreateHoldInput {
  /** The calendars (the caller's own and its children's); the caller's own when absent. */
  agentIds?: readonly string[] | undefined;
  startsAt: Date;
  endsAt: Date;
  ttlSeconds?: number | undefined;
}

export interface ConfirmedHold {
  hold: HoldItem;
  bookings: BookingItem[];
}

function holdNotFound(holdId: string): AppError {
  return new AppError('not_found', `no hold ${holdId}`);
}

/**
 * Holds: reserve a slot on one or several calendars for a few minutes, then confirm it into bookings (the same ids,
 * one transaction, idempotent) or release it. Every decision is taken by one SQL function under the row locks of the
 * holder and the calendars (holds/sql); an expired hold never blocks anything (writers in its way purge it).
 */
export class HoldService {
  constructor(
    private readonly statements: Statements,
    private readonly clock: Clock,
    private readonly events: EventAnnouncer,
    private readonly options: { bookingCap: number; onNewBookings: (bookings: readonly BookingItem[], at: Date) => void },
  ) {}

  async create(caller: Actor, input: CreateHoldInput): Promise<HoldItem> {
    const actor = agentOf(caller);
    const fields: FieldErrors = {};
    const agentIds = [...new Set((input.agentIds ?? [actor.id]).map((id) => id.toLowerCase()))];
    if (agentIds.length < 1 || agentIds.length > HOLD_LIMITS.maxCalendars) fields.agentIds = `must name 1 to ${HOLD_LIMITS.maxCalendars} agents`;
    else if (agentIds.some((id) => !isUuid(id))) fields.agentIds = 'must be agent ids';
    checkRange(input.startsAt, input.endsAt, fields);
    const ttl = input.ttlSeconds ?? HOLD_LIMITS.ttlDefaultSeconds;
    if (!Number.isInteger(ttl) || ttl < HOLD_LIMITS.ttlMinSeconds || ttl > HOLD_LIMITS.ttlMaxSeconds) {
      fields.ttlSeconds = `must be a whole number of seconds from ${HOLD_LIMITS.ttlMinSeconds} to ${HOLD_LIMITS.ttlMaxSeconds}`;
    }
    if (Object.keys(fields).length) throw AppError.validation(fields);
    const now = this.clock.now();
    const { outcome } = (await retryTransient(() =>
      this.statements.one(HOLD_CREATE, [
        actor.id,
        randomUUID(),
        agentIds,
        input.startsAt,
        input.endsAt,
        new Date(now.getTime() + ttl * 1000),
        this.options.bookingCap,
        HOLD_LIMITS.maxLiveHolds,
        now,
      ]).catch((error: unknown) => {
        throw constraintErrorOf(error) ?? error;
      }),
    ))!;
    if ('forbidden' in outcome) throw notActingFor('hold time on', input.agentIds ?? [actor.id], outcome.forbidden);
    if ('limitExceeded' in outcome) throw new AppError('limit_exceeded', `an agent may have ${HOLD_LIMITS.maxLiveHolds} live holds at once: confirm or release some`);
    if ('capReached' in outcome) throw new AppError('booking_cap_reached', `agent ${outcome.capReached} holds as many live bookings as the free tier allows (${this.options.bookingCap})`);
    if ('refused' in outcome) throw refusalError(outcome.refused);
    return outcome.hold;
  }

  /**
   * Every held booking becomes a confirmed booking with the same id, under the cap and the limits, with one
   * booking.created event per calendar; confirming a confirmed hold answers the same. `hold_expired`,
   * `hold_released`: nothing was booked.
   */
  async confirm(caller: Actor, holdId: string): Promise<ConfirmedHold> {
    const actor = agentOf(caller);
    if (!isUuid(holdId)) throw holdNotFound(holdId);
    const now = this.clock.now();
    const { outcome } = (await retryTransient(() => this.statements.one(HOLD_CONFIRM, [actor.id, holdId, this.options.bookingCap, now])))!;
    if ('missing' in outcome) throw holdNotFound(holdId);
    if ('forbidden' in outcome) throw new AppError('forbidden', 'only the holder may confirm a hold');
    if ('capReached' in outcome) throw new AppError('booking_cap_reached', `agent ${outcome.capReached} holds as many live bookings as the free tier allows (${this.options.bookingCap})`);
    if ('refused' in outcome) throw refusalError(outcome.refused);
    if (outcome.events) {
      const byAgent = new Map(outcome.bookings.map((booking) => [booking.agentId, booking]));
      this.events.announce(committedEvents({ events: outcome.events }, (agentId) => byAgent.get(agentId)!, now));
      this.options.onNewBookings(outcome.bookings, now);
    }
    return { hold: outcome.hold, bookings: outcome.bookings };
  }

  /** Frees the held time at once; releasing twice is fine. A confirmed hold is not released: cancel its bookings. */
  async release(caller: Actor, holdId: string): Promise<HoldItem> {
    const actor = agentOf(caller);
    if (!isUuid(holdId)) throw holdNotFound(holdId);
    const { outcome } = (await retryTransient(() => this.statements.one(HOLD_RELEASE, [actor.id, holdId, this.clock.now()])))!;
    if ('missing' in outcome) throw holdNotFound(holdId);
    if ('forbidden' in outcome) throw new AppError('forbidden', 'only the holder may release a hold');
    if ('confirmed' in outcome) throw new AppError('conflict', 'the hold is confirmed: its bookings are cancelled like any other');
    return outcome.hold;
  }

  async get(caller: Actor, holdId: string): Promise<HoldItem> {
    const actor = agentOf(caller);
    const row = isUuid(holdId) ? await this.statements.one(HOLD_BY_ID, [holdId, this.clock.now()]) : undefined;
    if (!row) throw holdNotFound(holdId);
    requireOwner(actor, row.holder_agent_id, 'hold');
    return row.hold;
  }

  /** The caller's live holds, newest first (at most `maxLiveHolds`: a holder has no more). */
  async listLive(caller: Actor): Promise<HoldItem[]> {
    const actor = agentOf(caller);
    return (await this.statements.rows(LIVE_HOLDS_OF, [actor.id, this.clock.now(), HOLD_LIMITS.maxLiveHolds])).map((row) => row.hold);
  }
}
