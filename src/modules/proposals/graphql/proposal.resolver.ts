import { Arg, Ctx, Directive, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { PROPOSAL_LIMITS, type ProposalService } from '../proposal.service.js';
import { AgentNode } from '../../agents/index.js';
import type { AgentsContext } from '../../agents/index.js';
import { checkLimit } from '../../../platform/graphql/page-size.js';
import { AVAILABILITY_LIMITS } from '../../availability/index.js';
import { CreateProposalInput, ProposalNode, ProposalRoleFilter, ProposalStatusFilter, ProposeFirstAvailableInput } from './proposal.types.js';
import { listSize } from '../../../platform/graphql/directives.js';

@Resolver(() => ProposalNode)
export class ProposalResolver {
  constructor(private readonly proposalService: ProposalService) {}

  @Directive(listSize({ slicingArguments: ['first'], requireOneSlicingArgument: false }))
  @Query(() => [ProposalNode], {
    description: `The caller's proposals, newest first: \`first\` of them, 1 to ${PROPOSAL_LIMITS.listMax} (narrow by \`role\` and \`status\`).`,
  })
  async proposals(
    @Ctx() ctx: AgentsContext,
    @Arg('role', () => ProposalRoleFilter, { nullable: true }) role?: ProposalRoleFilter | null,
    @Arg('status', () => ProposalStatusFilter, { nullable: true }) status?: ProposalStatusFilter | null,
    @Arg('first', () => Int, { defaultValue: PROPOSAL_LIMITS.listDefault }) first = PROPOSAL_LIMITS.listDefault as number,
  ): Promise<ProposalNode[]> {
    const actor = await ctx.actor();
    const page = await this.proposalService.list(actor, {
      role: role ?? undefined,
      status: status ?? undefined,
      limit: checkLimit('first', first, PROPOSAL_LIMITS.listMax),
    });
    return page.items.map(ProposalNode.from);
  }

  @Query(() => ProposalNode)
  async proposal(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    const actor = await ctx.actor();
    return ProposalNode.from(await this.proposalService.get(actor, id));
  }

  @Mutation(() => ProposalNode, {
    description: 'Asks the target agent to transfer the slot; starts pending. At most PENDING_PROPOSALS_MAX proposals to one target are pending at a time (`limit_exceeded`).',
  })
  async createProposal(@Arg('input') input: CreateProposalInput, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    const actor = await ctx.actor();
    return ProposalNode.from(await this.proposalService.create(actor, input));
  }

  @Mutation(() => ProposalNode, {
    description:
      'Finds the earliest free slot common to the caller and the target (as `availability` does, with its visibility rule) and opens a pending ' +
      'proposal for it in one call. `slot_taken` when a booking took the slot before the proposal was written; `conflict` when the window holds no common slot; ' +
      '`limit_exceeded` when PENDING_PROPOSALS_MAX proposals to that target are pending already.',
  })
  async proposeFirstAvailable(@Arg('input') input: ProposeFirstAvailableInput, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    const actor = await ctx.actor();
    return ProposalNode.from(
      await this.proposalService.proposeFirstAvailable(actor, {
        targetAgentId: input.targetAgentId,
        durationMinutes: input.duration,
        from: input.from,
        to: input.to,
        granularityMinutes: input.granularity ?? AVAILABILITY_LIMITS.granularityDefault,
      }),
    );
  }

  @Mutation(() => ProposalNode, { description: 'Target only: the slot moves to the proposer.' })
  async acceptProposal(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    return this.decide('accept', id, ctx);
  }

  @Mutation(() => ProposalNode, { description: 'Target only: keeps the slot; the proposal stays pending.' })
  async rejectProposal(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    return this.decide('reject', id, ctx);
  }

  @Mutation(() => ProposalNode, { description: 'Target only: refuses for good (declined).' })
  async declineProposal(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    return this.decide('decline', id, ctx);
  }

  @Mutation(() => ProposalNode, { description: 'Proposer only: takes the proposal back (withdrawn).' })
  async withdrawProposal(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<ProposalNode> {
    return this.decide('withdraw', id, ctx);
  }

  @FieldResolver(() => AgentNode)
  async proposer(@Root() proposal: ProposalNode, @Ctx() ctx: AgentsContext): Promise<AgentNode> {
    return AgentNode.from(await ctx.agents.loadAgent(proposal.proposerAgentId));
  }

  @FieldResolver(() => AgentNode)
  async target(@Root() proposal: ProposalNode, @Ctx() ctx: AgentsContext): Promise<AgentNode> {
    return AgentNode.from(await ctx.agents.loadAgent(proposal.targetAgentId));
  }

  private async decide(decision: 'accept' | 'reject' | 'decline' | 'withdraw', id: string, ctx: AgentsContext): Promise<ProposalNode> {
    const actor = await ctx.actor();
    return ProposalNode.from(await this.proposalService[decision](actor, id));
  }
}
