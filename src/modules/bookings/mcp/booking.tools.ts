import { SCHEDULING_LIMITS } from '../../../platform/api-limits.js';
import { tool, TOOL_ARGUMENTS, type ToolDefinition } from '../../../platform/mcp/tool.js';
import { BOOKING_LIMITS, type BookingService } from '../booking.service.js';
import { decodeBookingCursor } from '../list-cursors.js';
import { RESCHEDULE_SCOPES, type RescheduleScope } from '../reschedule.js';

const { dateTime } = TOOL_ARGUMENTS;

/** The MCP tools of an agent's calendar, answering the seed's BookingItem as REST does. */
export function bookingTools(bookings: BookingService): ToolDefinition<unknown>[] {
  return [
    tool<{ from?: string; to?: string; limit: number; after?: string }>({
      name: 'list_bookings',
      description:
        "The calling agent's bookings (confirmed and cancelled) intersecting [from, to), by start time. " +
        '`nextCursor` is null on the last page; otherwise pass it back as `after` (with the same from, to) for the next page.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          from: dateTime,
          to: dateTime,
          limit: { type: 'integer', minimum: 1, maximum: BOOKING_LIMITS.listMax, default: BOOKING_LIMITS.listDefault, description: `1 to ${BOOKING_LIMITS.listMax}` },
          after: { type: 'string', minLength: 1, maxLength: 200, description: 'nextCursor of the previous page' },
        },
      },
      annotations: { readOnlyHint: true },
      run: async ({ from, to, limit, after }, { actor }) => {
        const window = { from: from === undefined ? undefined : new Date(from), to: to === undefined ? undefined : new Date(to) };
        const page = await bookings.list(await actor(), window, limit, after === undefined ? undefined : decodeBookingCursor(after));
        return { items: page.items, nextCursor: page.nextCursor };
      },
    }),
    tool<{ startsAt: string; endsAt: string; idempotencyKey?: string }>({
      name: 'create_booking',
      description: "Books [startsAt, endsAt) on the calling agent's calendar. Overlaps answer slot_taken.",
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['startsAt', 'endsAt'],
        properties: {
          startsAt: dateTime,
          endsAt: dateTime,
          idempotencyKey: { type: 'string', minLength: 1, maxLength: SCHEDULING_LIMITS.idempotencyKeyMaxLength, description: 'the same key again answers the first booking' },
        },
      },
      run: async ({ startsAt, endsAt, idempotencyKey }, { actor }) =>
        bookings.create(await actor(), { startsAt: new Date(startsAt), endsAt: new Date(endsAt) }, idempotencyKey),
    }),
    tool<{ bookingId: string }>({
      name: 'cancel_booking',
      description: "Soft-cancels one of the calling agent's bookings (idempotent); the slot is freed.",
      inputSchema: { type: 'object', additionalProperties: false, required: ['bookingId'], properties: { bookingId: { type: 'string', minLength: 1 } } },
      annotations: { idempotentHint: true, destructiveHint: true },
      run: async ({ bookingId }, { actor }) => bookings.cancel(await actor(), bookingId),
    }),
      tool<{ agentIds: string[]; startsAt: string; endsAt: string; idempotencyKey?: string }>({
      name: 'create_group_booking',
      description:
        `Books [startsAt, endsAt) on several calendars the caller may act for (its own and its children's; 1 to ${BOOKING_LIMITS.groupMaxAgents}), ` +
        "all or none, under each calendar's rules; one booking per calendar, in agent id order.",
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['agentIds', 'startsAt', 'endsAt'],
        properties: {
          agentIds: { type: 'array', minItems: 1, maxItems: BOOKING_LIMITS.groupMaxAgents, items: { type: 'string', minLength: 1, maxLength: BOOKING_LIMITS.agentIdMaxLength } },
          startsAt: dateTime,
          endsAt: dateTime,
          idempotencyKey: { type: 'string', minLength: 1, maxLength: SCHEDULING_LIMITS.idempotencyKeyMaxLength, description: 'the same key again answers the first result' },
        },
      },
      run: async ({ agentIds, startsAt, endsAt, idempotencyKey }, { actor }) => ({
        items: await bookings.createGroup(await actor(), { agentIds, startsAt: new Date(startsAt), endsAt: new Date(endsAt) }, idempotencyKey),
      }),
    }),
    tool<{ bookingId: string; startsAt: string; endsAt: string; scope?: RescheduleScope; occurrenceStartsAt?: string; expectedVersion?: number }>({
      name: 'reschedule_booking',
      description:
        "Moves one of the calling agent's bookings to [startsAt, endsAt), keeping its id, under every rule a create faces. expectedVersion (the " +
        "booking's version) moves only that version: another answers version_mismatch. A recurring booking: scope series (the default), " +
        'occurrence (with occurrenceStartsAt: it becomes a booking of its own) or following (this and following).',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['bookingId', 'startsAt', 'endsAt'],
        properties: {
          bookingId: { type: 'string', minLength: 1 },
          startsAt: dateTime,
          endsAt: dateTime,
          scope: { type: 'string', enum: [...RESCHEDULE_SCOPES] },
          occurrenceStartsAt: dateTime,
          expectedVersion: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
        },
      },
      run: async ({ bookingId, startsAt, endsAt, scope, occurrenceStartsAt, expectedVersion }, { actor }) =>
        bookings.reschedule(await actor(), {
          bookingId,
          startsAt: new Date(startsAt),
          endsAt: new Date(endsAt),
          scope,
          occurrenceStartsAt: occurrenceStartsAt === undefined ? undefined : new Date(occurrenceStartsAt),
          expectedVersion,
        }),
    }),
  ];
}
