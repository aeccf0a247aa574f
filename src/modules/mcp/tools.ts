import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Actor } from '../../platform/auth/actor.js';
import type { Logger } from '../../platform/logger.js';
import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import { AVAILABILITY_LIMITS as L, decodeSlotCursor, presentAvailabilityPage, type AvailabilityService } from '../availability/index.js';
import { BOOKING_LIMITS, decodeBookingCursor, toBookingItem, type BookingService } from '../bookings/index.js';
import { presentProposal, type ProposalService } from '../proposals/index.js';
import type { TokenAnalyticsService, TokenReadBudget } from '../token-analytics/index.js';
import { presentAnalytics, presentSafety } from '../token-analytics/index.js';

export interface McpDeps {
  logger: Logger;
  bookings: BookingService;
  proposals: ProposalService;
  availability: AvailabilityService;
  tokens: TokenAnalyticsService;
  tokenReads: TokenReadBudget;
  version: string;
}

/** What a tool works with: the services, the agent of the request's token and the client's address. */
export interface ToolContext {
  deps: McpDeps;
  actor: () => Promise<Actor>;
  address: string;
}

/**
 * The JSON Schema of a tool's arguments, published in `tools/list` and checked as it stands: an object
 * closed to arguments it does not name. Only keywords that mean the same in draft-07 (what ajv checks)
 * and 2020-12 (MCP's default dialect).
 */
export interface ToolInputSchema {
  type: 'object';
  additionalProperties: false;
  properties: Readonly<Record<string, object>>;
  required?: readonly string[];
}

/** One tool: its listing, and what it does with arguments its schema accepted (defaults filled in). */
export interface ToolDefinition<Args> {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  annotations?: ToolAnnotations;
  // A method (its parameter is checked both ways), so that a tool of any arguments is a ToolDefinition<unknown> in the table.
  run(args: Args, context: ToolContext): Promise<unknown>;
}

const tool = <Args>(definition: ToolDefinition<Args>): ToolDefinition<Args> => definition;

const dateTime = { type: 'string', format: 'date-time', description: 'RFC 3339 date-time with an offset: 2031-05-06T14:00:00Z, 2031-05-06T16:00:00+02:00' } as const;
const mint = { type: 'string', description: 'base58 token mint, 32 to 44 characters' } as const;
const agentId = { type: 'string', minLength: 1, maxLength: SCHEDULING_LIMITS.agentIdMaxLength } as const;
const duration = { type: 'integer', minimum: L.durationMin, maximum: L.durationMax, description: `slot length in minutes, ${L.durationMin} to ${L.durationMax}` } as const;
const granularity = {
  type: 'integer',
  minimum: L.granularityMin,
  maximum: L.granularityMax,
  default: L.granularityDefault,
  description: `minutes between candidate starts (multiples since 1970-01-01T00:00Z), ${L.granularityMin} to ${L.granularityMax}`,
} as const;

const DECISIONS = ['accept', 'reject', 'decline', 'withdraw'] as const;

/** The tools an agent needs, over the same services as REST, answering the same data. */
export const TOOLS: readonly ToolDefinition<unknown>[] = [
  tool<{ mint: string }>({
    name: 'get_token_analytics',
    description: 'Price, liquidity, 24 h volume, trades, price change, FDV and market cap of a Solana token mint, from its DEX pairs.',
    inputSchema: { type: 'object', additionalProperties: false, required: ['mint'], properties: { mint } },
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async (args, { deps, address }) => {
      await deps.tokenReads.spend(address);
      return presentAnalytics(await deps.tokens.analytics(args.mint));
    },
  }),

  tool<{ mint: string }>({
    name: 'get_token_safety',
    description: 'A 0–100 safety score for a token mint with named, weighted checks and the inputs that were missing.',
    inputSchema: { type: 'object', additionalProperties: false, required: ['mint'], properties: { mint } },
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async (args, { deps, address }) => {
      await deps.tokenReads.spend(address);
      return presentSafety(await deps.tokens.safety(args.mint));
    },
  }),

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
    run: async ({ from, to, limit, after }, { deps, actor }) => {
      const window = { from: from === undefined ? undefined : new Date(from), to: to === undefined ? undefined : new Date(to) };
      const page = await deps.bookings.list(await actor(), window, limit, after === undefined ? undefined : decodeBookingCursor(after));
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
    run: async ({ startsAt, endsAt, idempotencyKey }, { deps, actor }) =>
      toBookingItem(await deps.bookings.create(await actor(), { startsAt: new Date(startsAt), endsAt: new Date(endsAt) }, idempotencyKey)),
  }),

  tool<{ bookingId: string }>({
    name: 'cancel_booking',
    description: "Soft-cancels one of the calling agent's bookings (idempotent); the slot is freed.",
    inputSchema: { type: 'object', additionalProperties: false, required: ['bookingId'], properties: { bookingId: { type: 'string', minLength: 1 } } },
    annotations: { idempotentHint: true, destructiveHint: true },
    run: async ({ bookingId }, { deps, actor }) => toBookingItem(await deps.bookings.cancel(await actor(), bookingId)),
  }),

  tool<{ targetAgentId: string; startsAt: string; endsAt: string }>({
    name: 'propose_slot',
    description: 'Asks another agent to hand over the slot [startsAt, endsAt); the proposal starts pending.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['targetAgentId', 'startsAt', 'endsAt'],
      properties: { targetAgentId: agentId, startsAt: dateTime, endsAt: dateTime },
    },
    run: async ({ targetAgentId, startsAt, endsAt }, { deps, actor }) =>
      presentProposal(await deps.proposals.create(await actor(), { targetAgentId, startsAt: new Date(startsAt), endsAt: new Date(endsAt) })),
  }),

  tool<{ agentIds: string[]; duration: number; from: string; to: string; granularity: number; limit: number; after?: string }>({
    name: 'availability',
    description:
      `Free slots of \`duration\` minutes common to the calling agent and up to ${L.maxOtherAgents} others inside [from, to) (at most ${L.maxWindowDays} days), ` +
      'earliest first, every free grid start listed. Agents that do not share their free/busy with the caller (or do not exist) answer forbidden.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['agentIds', 'duration', 'from', 'to'],
      properties: {
        agentIds: { type: 'array', maxItems: L.maxOtherAgents, items: agentId, description: 'the other agents; the caller is always included' },
        duration,
        from: dateTime,
        to: dateTime,
        granularity,
        limit: { type: 'integer', minimum: 1, maximum: L.firstMax, default: L.firstDefault, description: `1 to ${L.firstMax}` },
        after: { type: 'string', minLength: 1, maxLength: 100, description: 'nextCursor of the previous page' },
      },
    },
    annotations: { readOnlyHint: true },
    run: async ({ agentIds, duration: minutes, from, to, granularity: step, limit, after }, { deps, actor }) =>
      presentAvailabilityPage(
        await deps.availability.find(await actor(), {
          agentIds,
          durationMinutes: minutes,
          from: new Date(from),
          to: new Date(to),
          granularityMinutes: step,
          first: limit,
          after: after === undefined ? undefined : decodeSlotCursor(after),
        }),
      ),
  }),

  tool<{ targetAgentId: string; duration: number; from: string; to: string; granularity: number }>({
    name: 'propose_first_available',
    description:
      'Finds the earliest free slot common to the calling agent and the target inside [from, to) and opens a pending proposal for it. ' +
      'slot_taken when a booking took it meanwhile (ask again); conflict when there is no common slot; forbidden when the target does not share its free/busy.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['targetAgentId', 'duration', 'from', 'to'],
      properties: { targetAgentId: agentId, duration, from: dateTime, to: dateTime, granularity },
    },
    run: async ({ targetAgentId, duration: minutes, from, to, granularity: step }, { deps, actor }) =>
      presentProposal(
        await deps.proposals.proposeFirstAvailable(await actor(), { targetAgentId, durationMinutes: minutes, from: new Date(from), to: new Date(to), granularityMinutes: step }),
      ),
  }),

  tool<{ proposalId: string; decision: (typeof DECISIONS)[number] }>({
    name: 'respond_to_proposal',
    description: 'accept or reject (target), decline (target, final) or withdraw (proposer) a proposal.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['proposalId', 'decision'],
      properties: { proposalId: { type: 'string', minLength: 1 }, decision: { type: 'string', enum: DECISIONS } },
    },
    run: async ({ proposalId, decision }, { deps, actor }) => presentProposal(await deps.proposals[decision](await actor(), proposalId)),
  }),
];
