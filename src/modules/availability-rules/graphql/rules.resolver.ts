import { Arg, Ctx, Directive, ID, Mutation, Query, Resolver } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { AvailabilityRulesService } from '../rules.service.js';
import { RULE_LIMITS as L, type AvailabilityRulesInput } from '../rules.view.js';
import { AvailabilityRulesInputType, AvailabilityRulesNode, WorkingRangeNode } from './rules.types.js';

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

  @Directive(listSize({ assumedSize: L.intervalsPerDay * (L.workingTimeMaxDays + 1) }))
  @Query(() => [WorkingRangeNode], {
    nullable: true,
    description:
      'The working time of the caller, or of one of its children (`agentId`), inside [from, to), as instants: the hours and overrides ' +
      `in the rules' zone, as every writer reads them (at most ${L.workingTimeMaxDays} days, else a \`validation\` error naming \`to\`). ` +
      'Null when the agent has no rules: all of its time is working time.',
  })
  async workingTime(
    @Arg('from') from: Date,
    @Arg('to') to: Date,
    @Ctx() ctx: PlatformContext,
    @Arg('agentId', () => ID, { nullable: true }) agentId?: string | null,
  ): Promise<WorkingRangeNode[] | null> {
    const ranges = await this.rules.workingTime(await ctx.actor(), from, to, agentId ?? undefined);
    return ranges && ranges.map((range) => Object.assign(new WorkingRangeNode(), range));
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
