import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../platform/clock.js';
import { retryTransient } from '../../platform/db/pg-errors.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import { committedEvents, type EventAnnouncer } from '../bookings/index.js';
import { ormReplicaRead } from '../../platform/db/replica-routing.js';
import type { Statements } from '../../platform/db/statements.js';
import { ACCEPT_PROPOSAL, type ProposalRow } from './sql/proposal.sql.js';
import type { Actor } from '../../platform/auth/actor.js';
import { agentOf, type AgentRecord } from '../agents/index.js';
import type { AvailabilityService } from '../availability/index.js';
import { lockAgent, type BookingService } from '../bookings/index.js';
import { Agent } from '../agents/index.js';
import { Proposal, type ProposalStatus } from './entities/proposal.entity.js';
import { checkRange } from '../bookings/index.js';
import { isUuid } from '../../platform/uuid.js';
import { findStoredOutcome, replay, storeOutcome, type IdempotentRequest } from '../bookings/index.js';
import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import { refusal, requireParty } from './access.js';
import { encodeProposalCursor, type ProposalCursor } from './list-cursors.js';
import { applyFanOutLimits, fanOutRefusal, type FanOutLimits } from '../agents/index.js';
import { echo } from '../../platform/echo.js';
import { refusalError } from '../availability-rules/index.js';

export const PROPOSAL_LIMITS = {
  agentIdMaxLength: SCHEDULING_LIMITS.agentIdMaxLength,
  listDefault: SCHEDULING_LIMITS.pageDefault,
  listMax: SCHEDULING_LIMITS.pageMax,
} as const;

/** Seed 000 `ProposalItem` with Date values. */
export interface ProposalView {
  id: string;
  proposerAgentId: string;
  targetAgentId: string;
  startsAt: Date;
  endsAt: Date;
  status: ProposalStatus;
  createdAt: Date;
  bookingId: string | null;
}

export interface ProposalPage {
  items: ProposalView[];
  /** Where the next page starts (`after`); null on the last page. */
  nextCursor: string | null;
}

export interface CreateProposalInput {
  targetAgentId: string;
  startsAt: Date;
  endsAt: Date;
}

/** `proposeFirstAvailable`: the earliest free slot common to the caller and the target inside `[from, to)`. */
export interface ProposeFirstAvailableInput {
  targetAgentId: string;
  durationMinutes: number;
  from: Date;
  to: Date;
  granularityMinutes: number;
}

export type ProposalRole = 'incoming' | 'outgoing';

export function toProposalView(proposal: Proposal): ProposalView {
  return {
    id: proposal.id,
    proposerAgentId: proposal.proposer.id,
    targetAgentId: proposal.target.id,
    startsAt: proposal.startsAt,
    endsAt: proposal.endsAt,
    status: proposal.status,
    createdAt: proposal.createdAt,
    bookingId: proposal.booking?.id ?? null,
  };
}

function revive(view: ProposalView): ProposalView {
  return { ...view, startsAt: new Date(view.startsAt), endsAt: new Date(view.endsAt), createdAt: new Date(view.createdAt) };
}

function proposalNotFound(proposalId: string): AppError {
  return new AppError('not_found', `no proposal ${echo(proposalId)}`);
}

function fromProposalRow(row: ProposalRow): ProposalView {
  return {
    id: row.id,
    proposerAgentId: row.proposer_agent_id,
    targetAgentId: row.target_agent_id,
    startsAt: new Date(row.starts_at),
    endsAt: new Date(row.ends_at),
    status: row.status,
    createdAt: new Date(row.created_at),
    bookingId: row.booking_id,
  };
}

function checkTarget(actor: AgentRecord, targetAgentId: string, fields: FieldErrors): void {
  if (targetAgentId.length < 1 || targetAgentId.length > PROPOSAL_LIMITS.agentIdMaxLength) {
    fields.targetAgentId = `must be 1 to ${PROPOSAL_LIMITS.agentIdMaxLength} characters`;
  } else if (targetAgentId.toLowerCase() === actor.id) {
    fields.targetAgentId = 'must be another agent than the proposer';
  }
}

/** Row locks of several agents, in id order (the order every multi-agent write takes them). */
async function lockAgents(tx: EntityManager, agentIds: readonly string[]): Promise<void> {
  await tx.execute('select 1 from agents where id in (?) order by id for no key update', [[...new Set(agentIds)]]);
}

/** Whether a slot of either agent overlaps [startsAt, endsAt), as the exclusion constraint would see it. */
async function slotTaken(tx: EntityManager, agentIds: readonly string[], startsAt: Date, endsAt: Date): Promise<boolean> {
  const rows = await tx.execute<{ taken: boolean }[]>(
    `select exists (
       select 1 from booking_slots
        where agent_id in (?) and tstzrange(starts_at, ends_at, '[)') && tstzrange(?, ?, '[)')
     ) as taken`,
    [[...agentIds], startsAt, endsAt],
  );
  return rows[0]?.taken === true;
}

function notPending(status: ProposalStatus): AppError {
  return new AppError('proposal_not_pending', `the proposal is already ${status}`);
}

/**
 * Slot-transfer proposals. Every decision is a conditional update (`… where status = 'pending'`), so
 * of simultaneous accepts, declines and withdrawals exactly one takes effect.
 */
export class ProposalService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly bookings: BookingService,
    private readonly events: EventAnnouncer,
    private readonly statements: Statements,
    private readonly availability: AvailabilityService,
    private readonly limits: FanOutLimits,
  ) {}

  async create(caller: Actor, input: CreateProposalInput, idempotencyKey?: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    const fields: FieldErrors = {};
    checkTarget(actor, input.targetAgentId, fields);
    checkRange(input.startsAt, input.endsAt, fields);
    if (Object.keys(fields).length) throw AppError.validation(fields);

    const request: IdempotentRequest | undefined = idempotencyKey
      ? { agentId: actor.id, operation: 'create_proposal', key: idempotencyKey, body: input }
      : undefined;
    return this.open(actor, input, request, { whileFree: false });
  }

  /**
   * Finds the earliest free slot common to the caller and the target (`availability`, with its
   * visibility rule: a target that does not share is `forbidden`) and opens a proposal for it in one
   * call. The slot is checked again under both agents' row locks, which every calendar write takes:
   * a booking that took it meanwhile makes this `slot_taken`, and none can take it before the commit.
   * No common slot in the window is a `conflict`.
   */
  async proposeFirstAvailable(caller: Actor, input: ProposeFirstAvailableInput, idempotencyKey?: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    const fields: FieldErrors = {};
    checkTarget(actor, input.targetAgentId, fields);
    if (Object.keys(fields).length) throw AppError.validation(fields);
    const request: IdempotentRequest | undefined = idempotencyKey
      ? { agentId: actor.id, operation: 'propose_first_available', key: idempotencyKey, body: input }
      : undefined;
    if (request) {
      // A repeat answers what the first request did, whatever the calendars hold now.
      const stored = await findStoredOutcome<ProposalView>(this.em, request, this.clock.now());
      if (stored) return revive(replay(stored));
    }
    const slot = await this.availability.firstCommonSlot(caller, input.targetAgentId, {
      durationMinutes: input.durationMinutes,
      from: input.from,
      to: input.to,
      granularityMinutes: input.granularityMinutes,
    });
    if (!slot) {
      throw new AppError(
        'conflict',
        `no free slot of ${input.durationMinutes} minutes common to both calendars between ${input.from.toISOString()} and ${input.to.toISOString()}: widen the window or shorten the duration`,
      );
    }
    return this.open(actor, { targetAgentId: input.targetAgentId.toLowerCase(), startsAt: slot.startsAt, endsAt: slot.endsAt }, request, { whileFree: true });
  }

  /**
   * Writes a pending proposal. `whileFree`: only while [startsAt, endsAt) is still free on both
   * calendars, checked under both agents' row locks (taken in id order, as `accept_proposal` does).
   */
  private async open(actor: AgentRecord, input: CreateProposalInput, request: IdempotentRequest | undefined, options: { whileFree: boolean }): Promise<ProposalView> {
    return retryTransient(() =>
      this.em.transactional(async (tx) => {
        const now = this.clock.now();
        await applyFanOutLimits(tx, this.limits);
        if (options.whileFree) await lockAgents(tx, [actor.id, input.targetAgentId]);
        else if (request) await lockAgent(tx, actor.id);
        if (request) {
          const stored = await findStoredOutcome<ProposalView>(tx, request, now);
          if (stored) return revive(replay(stored));
        }
        const target = isUuid(input.targetAgentId) ? await tx.findOne(Agent, input.targetAgentId, { fields: ['id'] }) : null;
        if (!target) throw AppError.validation({ targetAgentId: 'is not an existing agent' });
        if (options.whileFree && (await slotTaken(tx, [actor.id, target.id], input.startsAt, input.endsAt))) {
          throw new AppError('slot_taken', 'the first common free slot was booked while the proposal was written; ask again for the next one');
        }
        const proposal = tx.create(Proposal, {
          proposer: actor.id,
          target: target.id,
          startsAt: input.startsAt,
          endsAt: input.endsAt,
          status: 'pending',
          createdAt: now,
        });
        try {
          await tx.flush();
        } catch (error) {
          // More pending proposals to this target than PENDING_PROPOSALS_MAX allows (the trigger counts them).
          throw fanOutRefusal(error, this.limits) ?? error;
        }
        const view = toProposalView(proposal);
        if (request) await storeOutcome(tx, request, { ok: view }, now);
        return view;
      }),
    );
  }

  /** The caller's proposals, newest first (`createdAt`, then id), `limit` of them after the `after` position. */
  async list(
    caller: Actor,
    filter: { role?: ProposalRole | undefined; status?: ProposalStatus | undefined; limit: number; after?: ProposalCursor | undefined },
  ): Promise<ProposalPage> {
    const actor = agentOf(caller);
    const mine =
      filter.role === 'incoming'
        ? { target: actor.id }
        : filter.role === 'outgoing'
          ? { proposer: actor.id }
          : { $or: [{ target: actor.id }, { proposer: actor.id }] };
    const after = filter.after;
    const older = after ? [{ $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, id: { $lt: after.id } }] }] : [];
    // A list: a replica that has replayed the caller's last write may answer it.
    const proposals = await ormReplicaRead(() =>
      this.em.find(
        Proposal,
        { $and: [mine, ...(filter.status ? [{ status: filter.status }] : []), ...older] },
        { orderBy: { createdAt: 'desc', id: 'desc' }, limit: filter.limit + 1 },
      ),
    );
    const items = proposals.slice(0, filter.limit).map(toProposalView);
    return { items, nextCursor: proposals.length > filter.limit ? encodeProposalCursor(items.at(-1)!) : null };
  }

  async get(caller: Actor, proposalId: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    const proposal = await this.find(this.em, proposalId);
    requireParty(actor.id, partiesOf(proposal), 'read');
    return toProposalView(proposal);
  }

  /**
   * The target hands the slot over, in one transaction with the conditional status update: its
   * single booking of exactly that range moves to the proposer; an occurrence of a series of that
   * range leaves the series (EXDATE) and becomes a single booking of the proposer; otherwise a new
   * one is created for the proposer. A clash on the proposer's calendar is `slot_taken`, and the target's
   * hours, notice or advance (or the proposer's own rules, if it enforces them) refuse with the rule's code;
   * either way the proposal stays pending (the series keeps its occurrence).
   */
  async accept(caller: Actor, proposalId: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    if (!isUuid(proposalId)) throw proposalNotFound(proposalId);
    const now = this.clock.now();
    // A clash on the proposer's calendar is the exclusion constraint's `slot_taken` (constraint-errors.ts).
    const { outcome } = (await retryTransient(() => this.statements.one(ACCEPT_PROPOSAL, [actor.id, proposalId, now])))!;
    if ('missing' in outcome) throw proposalNotFound(proposalId);
    if ('forbidden' in outcome) throw refusal('accept');
    if ('notPending' in outcome) throw notPending(outcome.notPending);
    if ('refused' in outcome) throw refusalError(outcome.refused);
    this.events.announce(committedEvents(outcome, outcome.booking, now));
    // The proposer's booking may start inside the reminder lead; the sweep skips one already reminded.
    this.bookings.noteNewBooking(outcome.booking, now);
    return fromProposalRow(outcome.proposal);
  }

  /** Seed 000: only the target may reject, and a pending proposal stays pending. */
  async reject(caller: Actor, proposalId: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    const proposal = await this.find(this.em, proposalId);
    requireParty(actor.id, partiesOf(proposal), 'reject');
    if (proposal.status !== 'pending') throw notPending(proposal.status);
    return toProposalView(proposal);
  }

  async decline(caller: Actor, proposalId: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    return this.decide(actor, proposalId, 'decline', 'declined');
  }

  async withdraw(caller: Actor, proposalId: string): Promise<ProposalView> {
    const actor = agentOf(caller);
    return this.decide(actor, proposalId, 'withdraw', 'withdrawn');
  }

  private async decide(actor: AgentRecord, proposalId: string, action: 'decline' | 'withdraw', status: 'declined' | 'withdrawn'): Promise<ProposalView> {
    const proposal = await this.find(this.em, proposalId);
    requireParty(actor.id, partiesOf(proposal), action);
    const decided = await this.em.nativeUpdate(Proposal, { id: proposal.id, status: 'pending' }, { status, decidedAt: this.clock.now() });
    if (!decided) throw notPending((await this.em.findOneOrFail(Proposal, proposal.id, { refresh: true })).status);
    return { ...toProposalView(proposal), status };
  }

  private async find(em: EntityManager, proposalId: string): Promise<Proposal> {
    const proposal = isUuid(proposalId) ? await em.findOne(Proposal, proposalId) : null;
    if (!proposal) throw proposalNotFound(proposalId);
    return proposal;
  }
}

const partiesOf = (proposal: Proposal) => ({ proposerId: proposal.proposer.id, targetId: proposal.target.id });
