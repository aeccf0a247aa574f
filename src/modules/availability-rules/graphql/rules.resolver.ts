import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { AvailabilityRulesService } from '../rules.service.js';
import type { AvailabilityRulesInput } from '../rules.view.js';
import { AvailabilityRulesInputType, AvailabilityRulesNode } from './rules.types.js';

/** GraphQL's null for a field left out: the service's "absent" (its default). */
function inputOf(input: AvailabilityRulesInputType): AvailabilityRulesInput {
  return {
    timeZone: input.timeZone,
    weeklyHours: input.weeklyHours?.map(({ day, start, end }) => ({ day, start, end })) ?? null,
    dateOverrides: input.dateOverrides?.map(({ date, hours }) => ({ date, hours: hours.map(({ start, end }) => ({ start, end })) })),
    bufferBeforeMinutes: input.bufferBeforeMinutes ?? undefined,
    bufferAfterMinutes: input.bufferAfterMinutes ?? undefined,
    minimumNoticeMinutes: input.minimumNoticeMinutes ?? undefined,
    maximumAdvanceDays: input.maximumAdvanceDays ?? null,
    dailyLimit: input.dailyLimit ?? null,
    weeklyLimit: input.weeklyLimit ?? null,
    enforceOnOwnBookings: input.enforceOnOwnBookings ?? undefined,
  };
}

@Resolver()
export class AvailabilityRulesResolver {
  constructor(private readonly rules: AvailabilityRulesService) {}

  @Query(() => AvailabilityRulesNode, {
    nullable: true,
    description: 'The availability rules of the caller, or of one of its children (`agentId`); null when it has none.',
  })
  async availabilityRules(@Ctx() ctx: PlatformContext, @Arg('agentId', () => ID, { nullable: true }) agentId?: string | null): Promise<AvailabilityRulesNode | null> {
    const found = await this.rules.get(await ctx.actor(), agentId ?? undefined);
    return found && AvailabilityRulesNode.from(found);
  }

  @Mutation(() => AvailabilityRulesNode, {
    description: 'Replaces the rules of the caller (or of one of its children) whole; a field left out takes its default. Validation names the field.',
  })
  async setAvailabilityRules(
    @Arg('input') input: AvailabilityRulesInputType,
    @Ctx() ctx: PlatformContext,
    @Arg('agentId', () => ID, { nullable: true }) agentId?: string | null,
  ): Promise<AvailabilityRulesNode> {
    return AvailabilityRulesNode.from(await this.rules.set(await ctx.actor(), inputOf(input), agentId ?? undefined));
  }

  @Mutation(() => Boolean, { description: 'Removes the rules: the agent then behaves as one without rules. Always true.' })
  async clearAvailabilityRules(@Ctx() ctx: PlatformContext, @Arg('agentId', () => ID, { nullable: true }) agentId?: string | null): Promise<boolean> {
    await this.rules.clear(await ctx.actor(), agentId ?? undefined);
    return true;
  }
}
