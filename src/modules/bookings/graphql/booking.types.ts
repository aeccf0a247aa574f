import { Directive, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BOOKING_FIELDS, type BookingItem, type ProjectedBookingItem } from '../booking.shape.js';
import { BOOKING_LIMITS, FREE_BUSY_LIMITS } from '../booking.service.js';
import type { Slot } from '../recurrence.js';
import { PageInfo } from '../../../platform/graphql/page-info.js';
import { AgentNode, type AgentLoaders } from '../../agents/index.js';
import { listSize } from '../../../platform/graphql/directives.js';

// simpleResolvers (here and on every scheduling type): plain properties use graphql's default
// resolver; type-graphql's per-field wrapper would run for every field of every row of a list.
/** The item's properties, typed (the GraphQL fields are declared from the shape below). */
const BookingItemProperties = class {} as new () => BookingItem;

@ObjectType('Booking', { simpleResolvers: true, description: 'A half-open time range [startsAt, endsAt) on an agent calendar; with an rrule, the first occurrence of a series.' })
export class BookingNode extends BookingItemProperties {
  /**
   * The owning agent, set when the node is made (see `ownedBy`). A plain property, not a field
   * resolver: a resolver runs once per row of a page, with its resolve info and type-graphql's
   * argument handling: about 4 % of a 50-row page's CPU (test/measure/graphql-request.ts, alternating runs).
   */
  agent!: AgentNode;

  static from(booking: BookingItem, owner: AgentNode): BookingNode {
    // A spread, not Object.assign into an instance: V8 clones the item's shape in one step, a 50-row
    // page in a quarter of the time (nothing reads a Booking by its class).
    return { ...booking, agent: owner };
  }

  /**
   * The bookings as nodes, each with its owner, loaded once per agent: the caller's own calendar reads
   * nothing (the operation's loader knows the caller), a parent's view of its children's one batch.
   */
  static async ownedBy(bookings: readonly BookingItem[], agents: AgentLoaders): Promise<BookingNode[]> {
    return BookingNode.projectedOwnedBy(bookings, agents);
  }

  /**
   * `ownedBy` for bookings read with a projection (BookingService.list): only for the operation whose
   * selection made it, which reads none of the fields the projection left out.
   */
  static async projectedOwnedBy(bookings: readonly ProjectedBookingItem[], agents: AgentLoaders): Promise<BookingNode[]> {
    const agentIds = new Set<string>();
    for (const booking of bookings) agentIds.add(booking.agentId);
    const owners = new Map(await Promise.all([...agentIds].map(async (agentId) => [agentId, AgentNode.from(await agents.loadAgent(agentId))] as const)));
    return bookings.map((booking) => ({ ...booking, agent: owners.get(booking.agentId)! }) as BookingNode);
  }

  /** One booking as a node, with its owner (see `ownedBy`). */
  static async ownedOne(booking: BookingItem, agents: AgentLoaders): Promise<BookingNode> {
    return BookingNode.from(booking, AgentNode.from(await agents.loadAgent(booking.agentId)));
  }
}

// The item's fields, declared from the shape (booking.shape.ts) as the REST schema and SQL are: times are the
// item's ISO strings, which the DateTimeISO scalar passes through as they are.
const GRAPHQL_TYPE = { id: () => ID, text: () => String, status: () => String, instant: () => Date, integer: () => Int } as const;
for (const field of BOOKING_FIELDS) {
  const description = 'description' in field ? field.description : undefined;
  Field(GRAPHQL_TYPE[field.kind], { nullable: field.nullable, ...(description ? { description } : {}) })(BookingNode.prototype, field.name);
  // The owner follows its id, where the SDL has always listed it.
  if (field.name === 'agentId') Field(() => AgentNode, { description: 'The owning agent (batched).' })(BookingNode.prototype, 'agent');
}

@ObjectType('OccurrenceSlot', { simpleResolvers: true, description: 'One concrete occurrence: [startsAt, endsAt).' })
export class SlotNode {
  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  static from(slot: Slot): SlotNode {
    return Object.assign(new SlotNode(), { startsAt: slot.startsAt, endsAt: slot.endsAt });
  }
}

@ObjectType({ simpleResolvers: true })
export class BookingEdge {
  constructor(
    node: BookingNode,
    private readonly encode: (node: BookingNode) => string,
  ) {
    this.node = node;
  }

  /** Encoded only when a client asks for it: most pages are read without edge cursors. */
  @Field()
  get cursor(): string {
    return this.encode(this.node);
  }

  @Field(() => BookingNode)
  node: BookingNode;
}

@ObjectType({ simpleResolvers: true })
export class BookingConnection {
  @Field(() => [BookingEdge])
  edges!: BookingEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@InputType()
export class CreateBookingInput {
  @Field(() => ID, { description: 'Must be the agent of the credential.' })
  agentId!: string;

  @Field({ description: 'RFC 3339 with any offset; stored and returned in UTC.' })
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  @Field(() => String, {
    nullable: true,
    description:
      'RFC 5545 RRULE (e.g. `FREQ=WEEKLY;BYDAY=MO;COUNT=10`). Prefix a `DTSTART;TZID=Europe/Berlin:<local startsAt>` line to keep wall-clock time across daylight-saving changes. A local UNTIL is read on that wall clock and stored in UTC. Rule parts: FREQ (not SECONDLY or MINUTELY), INTERVAL, COUNT or UNTIL (a date-time), BYDAY, BYMONTHDAY, BYMONTH, WKST; combinations calendar apps read differently are refused (400 naming rrule).',
  })
  rrule?: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'A dry run of createBooking: nothing is written.' })
export class BookingPreview {
  @Directive(listSize({ assumedSize: BOOKING_LIMITS.previewConflictsShown }))
  @Field(() => [BookingNode], {
    description: `Existing bookings that the new one would overlap, earliest first: at most ${BOOKING_LIMITS.previewConflictsShown}.`,
  })
  conflicts!: BookingNode[];

  @Field({ description: `Whether more than ${BOOKING_LIMITS.previewConflictsShown} existing bookings conflict (only the first are listed).` })
  moreConflicts!: boolean;

  @Directive(listSize({ assumedSize: BOOKING_LIMITS.maxOccurrences }))
  @Field(() => [SlotNode], { description: `Occurrences of the new booking that clash, chronological (a series has at most ${BOOKING_LIMITS.maxOccurrences}).` })
  clashingOccurrences!: SlotNode[];

  @Field({ description: 'Whether the free-tier booking cap is already reached.' })
  capReached!: boolean;

  @Field(() => Int, { description: 'Occurrences that would be written (up to 366 days ahead).' })
  occurrenceCount!: number;

  @Field({ description: 'Whether createBooking would succeed now.' })
  available!: boolean;
}

@ObjectType({ simpleResolvers: true })
export class FreeBusy {
  @Directive(listSize({ assumedSize: FREE_BUSY_LIMITS.maxBookedSlots }))
  @Field(() => [SlotNode], { description: 'Merged busy intervals inside the window.' })
  busy!: SlotNode[];

  @Directive(listSize({ assumedSize: FREE_BUSY_LIMITS.maxBookedSlots + 1 }))
  @Field(() => [SlotNode], { description: 'The gaps between them inside the window.' })
  free!: SlotNode[];
}

@ObjectType('BookedSlot', { simpleResolvers: true, description: 'One live occurrence on the calendar, with the booking (single or series) it belongs to.' })
export class BookedSlotNode {
  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  @Field(() => BookingNode, { description: 'For a series, its first occurrence and rule; cancelOccurrence takes this id and the slot’s startsAt.' })
  booking!: BookingNode;
}

@InputType()
export class CreateGroupBookingInput {
  @Field(() => [ID], { description: `The calendars (1 to ${BOOKING_LIMITS.groupMaxAgents}): the caller’s own and its children’s.` })
  agentIds!: string[];

  @Field()
  startsAt!: Date;

  @Field()
  endsAt!: Date;
}

/** What a reschedule moves, spelt as REST and MCP spell it (reschedule.ts). */
export enum RescheduleScopeValue {
  series = 'series',
  occurrence = 'occurrence',
  following = 'following',
}
registerEnumType(RescheduleScopeValue, { name: 'RescheduleScope', description: 'What a reschedule of a recurring booking moves.' });

@InputType()
export class RescheduleBookingInput {
  @Field(() => ID)
  id!: string;

  @Field({ description: 'The new start (for a series: of its first occurrence, or of the moved one).' })
  startsAt!: Date;

  @Field()
  endsAt!: Date;

  @Field(() => RescheduleScopeValue, {
    nullable: true,
    description: 'A recurring booking: `series` (the default: the whole series), `occurrence` (one, which becomes a booking of its own) or `following` (this and following).',
  })
  scope?: RescheduleScopeValue | null;

  @Field({ nullable: true, description: 'With `occurrence` and `following`: the start of the occurrence to move.' })
  occurrenceStartsAt?: Date;

  @Field(() => Int, { nullable: true, description: 'Move only this version (Booking.version); another is `version_mismatch`.' })
  expectedVersion?: number | null;
}
