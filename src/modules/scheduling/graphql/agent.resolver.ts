import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { AgentService } from '../agent.service.js';
import { NEXT_STEP } from '../rest/agent.presenter.js';
import type { SchedulingContext } from './context.js';
import { AgentNode, CreateAgentInput, CreateAgentPayload, NextStep } from './agent.types.js';

@Resolver(() => AgentNode)
export class AgentResolver {
  constructor(private readonly agents: AgentService) {}

  @Query(() => AgentNode, { description: 'The calling agent, with its parent and children.' })
  async me(@Ctx() ctx: SchedulingContext): Promise<AgentNode> {
    return AgentNode.from(await ctx.scheduling.actor());
  }

  @Mutation(() => CreateAgentPayload, {
    description: 'Creates an agent: the bootstrap agent (no credential, `bootstrap: true`) or a child of the caller.',
  })
  async createAgent(@Arg('input') input: CreateAgentInput, @Ctx() ctx: SchedulingContext): Promise<CreateAgentPayload> {
    const created = await this.agents.create(ctx.credential, input);
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

  @FieldResolver(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Free-form keys and values given at creation; visible to the agent itself and its parent, null to others.',
  })
  async metadata(@Root() agent: AgentNode, @Ctx() ctx: SchedulingContext): Promise<Record<string, unknown> | null> {
    return (await this.mayReadSettings(agent, ctx)) ? agent.metadata : null;
  }

  @FieldResolver(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Free-form keys and values given at creation; visible to the agent itself and its parent, null to others.',
  })
  async config(@Root() agent: AgentNode, @Ctx() ctx: SchedulingContext): Promise<Record<string, unknown> | null> {
    return (await this.mayReadSettings(agent, ctx)) ? agent.config : null;
  }

  private async mayReadSettings(agent: AgentNode, ctx: SchedulingContext): Promise<boolean> {
    const caller = await ctx.scheduling.caller();
    return caller !== null && (caller.id === agent.id || caller.id === agent.parentId);
  }

  @FieldResolver(() => AgentNode, { nullable: true, description: 'The agent that created this one; null for the bootstrap agent.' })
  async parent(@Root() agent: AgentNode, @Ctx() ctx: SchedulingContext): Promise<AgentNode | null> {
    if (!agent.parentId) return null;
    return AgentNode.from(await ctx.scheduling.loadAgent(agent.parentId));
  }

  @FieldResolver(() => [AgentNode], { description: 'Agents this one created, oldest first.' })
  async children(@Root() agent: AgentNode, @Ctx() ctx: SchedulingContext): Promise<AgentNode[]> {
    return (await ctx.scheduling.childrenByParentId.load(agent.id)).map((child) => AgentNode.from(child));
  }
}
