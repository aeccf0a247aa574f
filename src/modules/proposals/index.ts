/**
 * Proposals (seed 000): one agent asks another to hand over a slot of its calendar.
 *
 * Glossary
 * - proposal: a proposer asks a target to hand over [startsAt, endsAt); pending until accepted (the
 *   slot moves), declined (target) or withdrawn (proposer). Reject leaves it pending.
 * - transfer: on accept, the target's booking of exactly that range moves to the proposer (one
 *   occurrence of a series leaves it); otherwise the proposer gets a new booking of the range.
 * - first available: a proposal of the earliest slot both calendars have free.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import type { FanOutLimits } from '../agents/index.js';
import type { AvailabilityService } from '../availability/index.js';
import type { BookingService, EventAnnouncer } from '../bookings/index.js';
import { PROPOSAL_CONSTRAINTS } from './constraint-errors.js';
import { Proposal } from './entities/proposal.entity.js';
import { ProposalResolver } from './graphql/proposal.resolver.js';
import { ProposalService } from './proposal.service.js';
import { proposalTools } from './mcp/proposal.tools.js';
import { registerProposalRoutes } from './rest/proposal.routes.js';
import { acceptProposalFunction } from './sql/accept-proposal.function.js';
import { pendingProposalsLimitTrigger } from './sql/pending-proposals-limit.trigger.js';

export { PROPOSAL_LIMITS, type ProposalService } from './proposal.service.js';
export { presentProposal } from './proposal.view.js';

export const proposalsEntities = [Proposal];
export const proposalsResolvers = [ProposalResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const proposalsSqlDefinitions = [acceptProposalFunction, pendingProposalsLimitTrigger];

export interface ProposalsDeps {
  em: EntityManager;
  clock: Clock;
  statements: Statements;
  bookings: BookingService;
  availability: AvailabilityService;
  events: EventAnnouncer;
  fanOutLimits: FanOutLimits;
}

export function createProposalsModule(deps: ProposalsDeps) {
  registerConstraintErrors(PROPOSAL_CONSTRAINTS);
  const proposals = new ProposalService(deps.em, deps.clock, deps.bookings, deps.events, deps.statements, deps.availability, deps.fanOutLimits);
  return {
    proposals,
    resolvers: [new ProposalResolver(proposals)],
    mcpTools: proposalTools(proposals),
    registerRoutes: (app: FastifyInstance) => registerProposalRoutes(app, proposals),
  };
}
