import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, Directive, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AppError } from '../../../platform/errors.js';
import { AGENT_LIMITS, type AgentService } from '../agent.service.js';
import { isUuid } from '../../../platform/uuid.js';
import { NEXT_STEP } from '../agent.view.js';
import type { AgentsContext } from './agent.loaders.js';
import { checkLimit } from '../../../platform/graphql/page-size.js';
import { AgentNode, CreateAgentInput, CreateAgentPayload, FreeBusyVisibility, NextStep } from './agent.types.js';
import { listSize } from '../../../platform/graphql/directives.js';

@Resolver(() => AgentNode)
export class AgentResolver {
  constructor(private readonly agents: AgentService) {}

  @Query(() => AgentNode, { description: 'The calling agent, with its parent and children.' })
  async me(@Ctx() ctx: AgentsContext): Promise<AgentNode> {
    return AgentNode.from(this.agents.me(await ctx.actor()));
  }

  @Mutation(() => CreateAgentPayload, {
    description:
      'Creates an agent: the bootstrap agent (no credential, `bootstrap: true`) or a child of the caller, within AGENT_CREATE_PER_MIN creations a minute ' +
      '(`rate_limited`, with `extensions.retryAfterSeconds`) and AGENT_FAMILY_MAX agents in the family, the root agent and all its descendants (`limit_exceeded`).',
  })
  async createAgent(@Arg('input') input: CreateAgentInput, @Ctx() ctx: AgentsContext): Promise<CreateAgentPayload> {
    const created = await this.agents.create(await ctx.actor(), {
      name: input.name,
      metadata: input.metadata ?? undefined,
      config: input.config ?? undefined,
      idempotencyKey: input.idempotencyKey ?? undefined,
      bootstrap: input.bootstrap ?? undefined,
    });
    return Object.assign(new CreateAgentPayload(), {
      agent: AgentNode.from(created.agent),
      publicToken: created.publicToken,
      nextStep: Object.assign(new NextStep(), {
        savePublicToken: NEXT_STEP.save_public_token,
        authorization: NEXT_STEP.authorization,
        xApiKey: NEXT_STEP.x_api_key,
        message: NEXT_STEP.message,
      }),
    });
  }

  @Mutation(() => AgentNode, {
    description: 'Sets who may ask for the caller’s free/busy (`availability`, `proposeFirstAvailable`): `family` (the default), `anyone` or `nobody`.',
  })
  async setFreeBusyVisibility(
    @Arg('visibility', () => FreeBusyVisibility) visibility: FreeBusyVisibility,
    @Ctx() ctx: AgentsContext,
  ): Promise<AgentNode> {
    return AgentNode.from(await this.agents.setFreeBusyVisibility(await ctx.actor(), visibility));
  }

  @FieldResolver(() => FreeBusyVisibility, {
    nullable: true,
    description: 'Who may ask for this agent’s free/busy; visible to the agent itself and its parent, null to others.',
  })
  async freeBusyVisibility(@Root() agent: AgentNode, @Ctx() ctx: AgentsContext): Promise<FreeBusyVisibility | null> {
    return this.agents.maySeeSettings(await ctx.actor(), agent) ? agent.freeBusyVisibility : null;
  }

  @FieldResolver(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Free-form keys and values given at creation; visible to the agent itself and its parent, null to others.',
  })
  async metadata(@Root() agent: AgentNode, @Ctx() ctx: AgentsContext): Promise<Record<string, unknown> | null> {
    return this.agents.maySeeSettings(await ctx.actor(), agent) ? agent.metadata : null;
  }

  @FieldResolver(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Free-form keys and values given at creation; visible to the agent itself and its parent, null to others.',
  })
  async config(@Root() agent: AgentNode, @Ctx() ctx: AgentsContext): Promise<Record<string, unknown> | null> {
    return this.agents.maySeeSettings(await ctx.actor(), agent) ? agent.config : null;
  }

  @FieldResolver(() => AgentNode, { nullable: true, description: 'The agent that created this one; null for the bootstrap agent.' })
  async parent(@Root() agent: AgentNode, @Ctx() ctx: AgentsContext): Promise<AgentNode | null> {
    if (!agent.parentId) return null;
    return AgentNode.from(await ctx.agents.loadAgent(agent.parentId));
  }

  @Directive(listSize({ slicingArguments: ['first'], requireOneSlicingArgument: false }))
  @FieldResolver(() => [AgentNode], {
    description:
      `Agents this one created, oldest first: \`first\` of them (1 to ${AGENT_LIMITS.childrenMax}) after the child \`after\`; ` +
      'a shorter page is the last, else pass its last id as `after`. ' +
      `One operation answers at most ${AGENT_LIMITS.childrenPerOperation} children in all (\`limit_exceeded\`).`,
  })
  async children(
    @Root() agent: AgentNode,
    @Ctx() ctx: AgentsContext,
    @Arg('first', () => Int, { defaultValue: AGENT_LIMITS.childrenDefault }) first = AGENT_LIMITS.childrenDefault as number,
    @Arg('after', () => ID, { nullable: true }) after?: string | null,
  ): Promise<AgentNode[]> {
    checkLimit('first', first, AGENT_LIMITS.childrenMax);
    // An empty `after` is no id either (it reached SQL as one: a 500).
    if (after != null && !isUuid(after)) throw AppError.validation({ after: 'is not the id of an agent' });
    const page = await ctx.agents.childrenPage.load({ parentId: agent.id, first, after: after ?? null });
    ctx.agents.countChildren(page.length);
    return page.map((child) => AgentNode.from(child));
  }
}
