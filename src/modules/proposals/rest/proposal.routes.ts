import type { FastifyInstance } from 'fastify';
import { setNextPageLink } from '../../../platform/http/next-page-link.js';
import type { ProposalStatus } from '../entities/proposal.entity.js';
import type { ProposalRole, ProposalService } from '../proposal.service.js';
import { presentProposal } from '../proposal.view.js';
import { decodeProposalCursor } from '../list-cursors.js';
import { createProposalRoute, decideProposalRoute, listProposalsRoute, proposeFirstAvailableRoute } from './proposal.schemas.js';

/** Of simultaneous accepts, declines and withdrawals exactly one takes effect (a conditional update in the service). */
const ONE_WINS = 'Of simultaneous accepts, declines and withdrawals exactly one takes effect; the others are 409 `proposal_not_pending`.';

const DECISIONS = {
  accept: {
    summary: 'Accept: the slot moves to the proposer (target only)',
    description:
      'The target hands [startsAt, endsAt) over in one transaction: its booking of exactly that range moves to the proposer, an occurrence ' +
      'of a series of that range leaves the series and becomes the proposer’s booking, and otherwise a new booking is created for the proposer. ' +
      'A clash on the proposer’s calendar is 409 `slot_taken` and the proposal stays pending. The status becomes `accepted`; the proposer’s ' +
      `subscribers get \`booking.created\`, the target’s \`booking.transferred\` when the slot came from one of its bookings. ${ONE_WINS}`,
  },
  reject: {
    summary: 'Reject: the target keeps the slot; the proposal stays pending',
    description:
      'Seed 000’s reject changes nothing: the target keeps its slot and the proposal stays `pending` (use decline to refuse for good). ' +
      'A proposal no longer pending is 409 `proposal_not_pending`.',
  },
  decline: {
    summary: 'Decline: the target refuses for good (terminal)',
    description: `The status becomes \`declined\` and no slot moves. ${ONE_WINS}`,
  },
  withdraw: {
    summary: 'Withdraw: the proposer takes the proposal back (terminal)',
    description: `The status becomes \`withdrawn\` and no slot moves. ${ONE_WINS}`,
  },
} as const;

export function registerProposalRoutes(app: FastifyInstance, proposals: ProposalService): void {
  app.post<{ Body: { targetAgentId: string; startsAt: string; endsAt: string }; Headers: { 'idempotency-key'?: string } }>(
    '/api/proposals',
    { schema: createProposalRoute },
    async (request, reply) => {
      const actor = await request.actor();
      const { targetAgentId, startsAt, endsAt } = request.body;
      const proposal = await proposals.create(
        actor,
        { targetAgentId, startsAt: new Date(startsAt), endsAt: new Date(endsAt) },
        request.headers['idempotency-key'],
      );
      return reply.code(201).send(presentProposal(proposal));
    },
  );

  app.post<{
    Body: { targetAgentId: string; duration: number; from: string; to: string; granularity: number };
    Headers: { 'idempotency-key'?: string };
  }>('/api/proposals/first-available', { schema: proposeFirstAvailableRoute }, async (request, reply) => {
    const actor = await request.actor();
    const { targetAgentId, duration, from, to, granularity } = request.body;
    const proposal = await proposals.proposeFirstAvailable(
      actor,
      { targetAgentId, durationMinutes: duration, from: new Date(from), to: new Date(to), granularityMinutes: granularity },
      request.headers['idempotency-key'],
    );
    return reply.code(201).send(presentProposal(proposal));
  });

  app.get<{ Querystring: { role?: ProposalRole; status?: ProposalStatus; limit: number; after?: string } }>(
    '/api/proposals',
    { schema: listProposalsRoute },
    async (request, reply) => {
      const actor = await request.actor();
      const { after, ...filter } = request.query;
      const page = await proposals.list(actor, { ...filter, after: after === undefined ? undefined : decodeProposalCursor(after) });
      setNextPageLink(request, reply, page.nextCursor);
      return { items: page.items.map(presentProposal) };
    },
  );

  for (const decision of Object.keys(DECISIONS) as (keyof typeof DECISIONS)[]) {
    app.patch<{ Params: { id: string } }>(
      `/api/proposals/:id/${decision}`,
      { schema: decideProposalRoute(`${decision}Proposal`, DECISIONS[decision].summary, DECISIONS[decision].description) },
      async (request) => {
        const actor = await request.actor();
        return presentProposal(await proposals[decision](actor, request.params.id));
      },
    );
  }
}
