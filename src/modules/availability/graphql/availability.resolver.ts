import { Arg, Ctx, Directive, ID, Int, Query, Resolver } from 'type-graphql';
import { AVAILABILITY_LIMITS as L, decodeSlotCursor, encodeSlotCursor, type AvailabilityService } from '../availability.service.js';
import { FreeSlotConnection, FreeSlotEdge, FreeSlotNode, SlotCheckNode } from './availability.types.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import { checkLimit } from '../../../platform/graphql/page-size.js';
import { cost, listSize } from '../../../platform/graphql/directives.js';

@Resolver()
export class AvailabilityResolver {
  constructor(private readonly calendars: AvailabilityService) {}

  // One statement over every asked agent's calendar in the window (8 ms for ten agents of 500 bookings, docs/performance.md S8): dearer than reading an object.
  @Directive(cost(10))
  @Directive(listSize({ slicingArguments: ['first'], sizedFields: ['edges'], requireOneSlicingArgument: false }))
  @Query(() => FreeSlotConnection, {
    description:
      'Free slots common to the caller and `agentIds` (at most ' +
      `${L.maxOtherAgents} others; the caller is always included) inside [from, to), at most ${L.maxWindowDays} days long: ` +
      `\`duration\` minutes (${L.durationMin} to ${L.durationMax}) starting on the \`granularity\` grid (${L.granularityMin} to ${L.granularityMax} minutes, ` +
      'multiples of it since 1970-01-01T00:00Z), earliest first. Every free grid start is listed, so slots overlap when the duration is longer than the step. ' +
      'Busy is what the overlap constraint sees: confirmed bookings and their occurrences, not cancelled ones or removed occurrences. ' +
      `\`first\` 1 to ${L.firstMax}. An agent that does not share its free/busy with the caller, or does not exist, is \`forbidden\`; ` +
      `more than ${L.maxBookedSlots} booked slots of the agents asked inside the window is a \`validation\` error naming \`to\`.`,
  })
  async availability(
    @Ctx() ctx: PlatformContext,
    @Arg('agentIds', () => [ID]) agentIds: string[],
    @Arg('duration', () => Int, { description: 'Minutes.' }) duration: number,
    @Arg('from') from: Date,
    @Arg('to') to: Date,
    @Arg('granularity', () => Int, { defaultValue: L.granularityDefault, description: 'Minutes between candidate starts.' })
    granularity = L.granularityDefault as number,
    @Arg('first', () => Int, { defaultValue: L.firstDefault }) first = L.firstDefault as number,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<FreeSlotConnection> {
    const actor = await ctx.actor();
    const page = await this.calendars.find(actor, {
      agentIds,
      durationMinutes: duration,
      from,
      to,
      granularityMinutes: granularity,
      first: checkLimit('first', first, L.firstMax),
      after: after != null ? decodeSlotCursor(after) : undefined,
    });
    const edges = page.items.map((slot) => new FreeSlotEdge(FreeSlotNode.from(slot), encodeSlotCursor));
    return { edges, pageInfo: { hasNextPage: page.hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
  }

  @Query(() => SlotCheckNode, {
    description:
      'Why not this slot: every reason [startsAt, endsAt) on `agentId`’s calendar (the caller’s own when absent) cannot be taken by the caller now, ' +
      `in the order writers refuse by (at most ${L.maxReasons}): the booking or live hold in the way, a buffer, the working hours, the notice, the ` +
      'advance, the daily or weekly limit. An agent that does not share its free/busy with the caller (or does not exist) is `forbidden`.',
  })
  async slotCheck(
    @Ctx() ctx: PlatformContext,
    @Arg('startsAt') startsAt: Date,
    @Arg('endsAt') endsAt: Date,
    @Arg('agentId', () => ID, { nullable: true }) agentId?: string | null,
  ): Promise<SlotCheckNode> {
    return Object.assign(new SlotCheckNode(), await this.calendars.checkSlot(await ctx.actor(), agentId ?? undefined, startsAt, endsAt));
  }
}
