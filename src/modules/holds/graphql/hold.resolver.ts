import { Arg, Ctx, Directive, ID, Mutation, Query, Resolver } from 'type-graphql';
import { listSize } from '../../../platform/graphql/directives.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { AgentsContext } from '../../agents/index.js';
import { BookingNode } from '../../bookings/index.js';
import { HOLD_LIMITS, type HoldService } from '../holds.service.js';
import { ConfirmedHoldNode, CreateHoldInput, HoldNode } from './hold.types.js';

@Resolver(() => HoldNode)
export class HoldResolver {
  constructor(private readonly service: HoldService) {}

  @Directive(listSize({ assumedSize: HOLD_LIMITS.maxLiveHolds }))
  @Query(() => [HoldNode], { description: `The caller’s live holds, newest first (at most ${HOLD_LIMITS.maxLiveHolds}).` })
  async holds(@Ctx() ctx: PlatformContext): Promise<HoldNode[]> {
    return (await this.service.listLive(await ctx.actor())).map(HoldNode.from);
  }

  @Query(() => HoldNode)
  async hold(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<HoldNode> {
    return HoldNode.from(await this.service.get(await ctx.actor(), id));
  }

  @Mutation(() => HoldNode, {
    description:
      'Holds a slot on one or several calendars (the caller’s own and its children’s), all or none, under each calendar’s rules; it blocks like a ' +
      `booking until confirmed, released or expired (${HOLD_LIMITS.ttlDefaultSeconds} s by default, at most ${HOLD_LIMITS.ttlMaxSeconds} s).`,
  })
  async createHold(@Arg('input') input: CreateHoldInput, @Ctx() ctx: PlatformContext): Promise<HoldNode> {
    return HoldNode.from(
      await this.service.create(await ctx.actor(), { agentIds: input.agentIds ?? undefined, startsAt: input.startsAt, endsAt: input.endsAt, ttlSeconds: input.ttlSeconds ?? undefined }),
    );
  }

  @Mutation(() => ConfirmedHoldNode, {
    description: 'Confirms a live hold into bookings with the same ids, in one transaction (idempotent); `hold_expired` or `hold_released` otherwise.',
  })
  async confirmHold(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<ConfirmedHoldNode> {
    const confirmed = await this.service.confirm(await ctx.actor(), id);
    return Object.assign(new ConfirmedHoldNode(), { hold: HoldNode.from(confirmed.hold), bookings: await BookingNode.ownedBy(confirmed.bookings, ctx.agents) });
  }

  @Mutation(() => HoldNode, { description: 'Releases a hold: its time is free again at once (idempotent).' })
  async releaseHold(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<HoldNode> {
    return HoldNode.from(await this.service.release(await ctx.actor(), id));
  }
}
