import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, Directive, ID, Info, Int, Mutation, Query, Resolver } from 'type-graphql';
import { BOOKING_LIMITS, FREE_BUSY_LIMITS, type BookingService } from '../booking.service.js';
import { decodeBookingCursor, encodeBookingCursor } from '../list-cursors.js';
import { bookingProjection } from '../booking.shape.js';
import {
  BookedSlotNode,
  BookingConnection,
  BookingEdge,
  BookingNode,
  BookingPreview,
  CreateBookingInput,
  CreateGroupBookingInput,
  FreeBusy,
  RescheduleBookingInput,
  SlotNode,
} from './booking.types.js';
import type { AgentsContext } from '../../agents/index.js';
import { checkLimit } from '../../../platform/graphql/page-size.js';
import { listSize } from '../../../platform/graphql/directives.js';
import { selectedFieldNames } from '../../../platform/graphql/selection.js';

@Resolver(() => BookingNode)
export class BookingResolver {
  constructor(private readonly calendar: BookingService) {}

  @Directive(listSize({ slicingArguments: ['first'], sizedFields: ['edges'], requireOneSlicingArgument: false }))
  @Query(() => BookingConnection, { description: "The caller's bookings intersecting [from, to), by startsAt." })
  async bookings(
    @Ctx() ctx: AgentsContext,
    @Info() info: GraphQLResolveInfo,
    @Arg('from', () => Date, { nullable: true }) from?: Date | null,
    @Arg('to', () => Date, { nullable: true }) to?: Date | null,
    @Arg('first', () => Int, { defaultValue: BOOKING_LIMITS.listDefault }) first = BOOKING_LIMITS.listDefault as number,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<BookingConnection> {
    const actor = await ctx.actor();
    const page = await this.calendar.list(
      actor,
      { from: from ?? undefined, to: to ?? undefined },
      checkLimit('first', first, BOOKING_LIMITS.listMax),
      after != null ? decodeBookingCursor(after) : undefined,
      // Only the columns of the fields the client selected (and those a page needs: its order, cursor and owner).
      bookingProjection(selectedFieldNames(info, ['edges', 'node'])),
    );
    const edges = (await BookingNode.projectedOwnedBy(page.items, ctx.agents)).map((node) => new BookingEdge(node, encodeBookingCursor));
    return { edges, pageInfo: { hasNextPage: page.hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
  }

  @Query(() => BookingNode)
  async booking(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<BookingNode> {
    const actor = await ctx.actor();
    return BookingNode.ownedOne(await this.calendar.get(actor, id), ctx.agents);
  }

  @Directive(listSize({ slicingArguments: ['limit'], requireOneSlicingArgument: false }))
  @Query(() => [SlotNode], { description: `The next \`limit\` concrete occurrences of a booking, from now (1 to ${BOOKING_LIMITS.listMax}).` })
  async occurrences(
    @Arg('bookingId', () => ID) bookingId: string,
    @Ctx() ctx: AgentsContext,
    @Arg('limit', () => Int, { defaultValue: BOOKING_LIMITS.listDefault }) limit = BOOKING_LIMITS.listDefault as number,
  ): Promise<SlotNode[]> {
    const actor = await ctx.actor();
    return (await this.calendar.occurrences(actor, bookingId, checkLimit('limit', limit, BOOKING_LIMITS.listMax))).items.map(SlotNode.from);
  }

  @Query(() => FreeBusy, {
    description:
      "Busy and free intervals of the caller's calendar inside [from, to). " +
      `The window spans at most ${FREE_BUSY_LIMITS.maxWindowDays} days and ${FREE_BUSY_LIMITS.maxBookedSlots} booked slots; ` +
      'a longer or fuller one is a `validation` error naming `to`.',
  })
  async freeBusy(@Arg('from') from: Date, @Arg('to') to: Date, @Ctx() ctx: AgentsContext): Promise<FreeBusy> {
    const actor = await ctx.actor();
    const { busy, free } = await this.calendar.freeBusy(actor, from, to);
    return { busy: busy.map(SlotNode.from), free: free.map(SlotNode.from) };
  }

  @Directive(listSize({ assumedSize: FREE_BUSY_LIMITS.maxBookedSlots }))
  @Query(() => [BookedSlotNode], {
    description:
      "The caller's live occurrences intersecting [from, to), by startsAt, each with its booking: series expanded, cancelled occurrences left out. " +
      `The same bounds as freeBusy: at most ${FREE_BUSY_LIMITS.maxWindowDays} days and ${FREE_BUSY_LIMITS.maxBookedSlots} slots, else a \`validation\` error naming \`to\`.`,
  })
  async bookedSlots(@Arg('from') from: Date, @Arg('to') to: Date, @Ctx() ctx: AgentsContext): Promise<BookedSlotNode[]> {
    const actor = await ctx.actor();
    const slots = await this.calendar.slots(actor, from, to);
    const bookings = await BookingNode.ownedBy(slots.map((slot) => slot.booking), ctx.agents);
    return slots.map((slot, i) => Object.assign(new BookedSlotNode(), { startsAt: slot.startsAt, endsAt: slot.endsAt, booking: bookings[i]! }));
  }

  @Query(() => BookingPreview, { description: 'A dry run of createBooking: conflicts and clashing occurrences, nothing written.' })
  async previewBooking(@Arg('input') input: CreateBookingInput, @Ctx() ctx: AgentsContext): Promise<BookingPreview> {
    const actor = await ctx.actor();
    const preview = await this.calendar.preview(actor, input);
    return {
      conflicts: await BookingNode.ownedBy(preview.conflicts, ctx.agents),
      moreConflicts: preview.moreConflicts,
      clashingOccurrences: preview.clashingOccurrences.map(SlotNode.from),
      capReached: preview.capReached,
      occurrenceCount: preview.occurrenceCount,
      available: !preview.capReached && preview.conflicts.length === 0,
    };
  }

  @Mutation(() => BookingNode)
  async createBooking(@Arg('input') input: CreateBookingInput, @Ctx() ctx: AgentsContext): Promise<BookingNode> {
    const actor = await ctx.actor();
    return BookingNode.ownedOne(await this.calendar.create(actor, input), ctx.agents);
  }

  @Directive(listSize({ assumedSize: BOOKING_LIMITS.groupMaxAgents }))
  @Mutation(() => [BookingNode], {
    description:
      `Books the same slot on several calendars the caller may act for (its own and its children’s; at most ${BOOKING_LIMITS.groupMaxAgents}), ` +
      'all or none, under each calendar’s rules, with one booking.created event per calendar. Answers the bookings in agent id order.',
  })
  async createGroupBooking(@Arg('input') input: CreateGroupBookingInput, @Ctx() ctx: AgentsContext): Promise<BookingNode[]> {
    const actor = await ctx.actor();
    return BookingNode.ownedBy(await this.calendar.createGroup(actor, input), ctx.agents);
  }

  @Mutation(() => BookingNode, {
    description:
      'Moves a booking to a new range keeping its id, under every rule a create by the caller faces; with `expectedVersion` only that version. ' +
      'One booking.rescheduled event carries the range before. For `occurrence` and `following`, answers the new booking.',
  })
  async rescheduleBooking(@Arg('input') input: RescheduleBookingInput, @Ctx() ctx: AgentsContext): Promise<BookingNode> {
    const actor = await ctx.actor();
    return BookingNode.ownedOne(
      await this.calendar.reschedule(actor, {
        bookingId: input.id,
        startsAt: input.startsAt,
        endsAt: input.endsAt,
        scope: input.scope ?? undefined,
        occurrenceStartsAt: input.occurrenceStartsAt ?? undefined,
        expectedVersion: input.expectedVersion ?? undefined,
      }),
      ctx.agents,
    );
  }

  @Mutation(() => BookingNode, { description: 'Soft-cancels a booking (idempotent); the row is kept.' })
  async cancelBooking(@Arg('id', () => ID) id: string, @Ctx() ctx: AgentsContext): Promise<BookingNode> {
    const actor = await ctx.actor();
    return BookingNode.ownedOne(await this.calendar.cancel(actor, id), ctx.agents);
  }

  @Mutation(() => BookingNode, { description: 'Removes one occurrence of a recurring booking (an EXDATE) and frees its slot.' })
  async cancelOccurrence(
    @Arg('bookingId', () => ID) bookingId: string,
    @Arg('startsAt') startsAt: Date,
    @Ctx() ctx: AgentsContext,
  ): Promise<BookingNode> {
    const actor = await ctx.actor();
    return BookingNode.ownedOne(await this.calendar.cancelOccurrence(actor, bookingId, startsAt), ctx.agents);
  }
}
