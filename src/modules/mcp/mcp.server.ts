import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Actor } from '../../platform/auth/actor.js';
import { INTERNAL_ERROR, toAppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AvailabilityService, BookingService, ProposalService } from '../scheduling/index.js';
import {
  AVAILABILITY_LIMITS,
  BOOKING_LIMITS,
  decodeBookingCursor,
  decodeSlotCursor,
  presentAvailabilityPage,
  presentProposal,
  SCHEDULING_LIMITS,
  toBookingItem,
} from '../scheduling/index.js';
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

const dateTime = z.string().datetime({ offset: true }).describe('RFC 3339 date-time with an offset');
const L = AVAILABILITY_LIMITS;
const duration = z.number().int().min(L.durationMin).max(L.durationMax).describe(`slot length in minutes, ${L.durationMin} to ${L.durationMax}`);
const granularity = z
  .number()
  .int()
  .min(L.granularityMin)
  .max(L.granularityMax)
  .optional()
  .describe(`minutes between candidate starts (multiples since 1970-01-01T00:00Z), ${L.granularityMin} to ${L.granularityMax}; default ${L.granularityDefault}`);

/**
 * Tools answer with the same data as the REST routes. A domain error becomes an error result whose
 * text is `{error, message}` with the REST code; anything unexpected is a bare internal error.
 */
async function answer(work: () => Promise<unknown>, logger: Logger): Promise<CallToolResult> {
  try {
    const data = await work();
    return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data as Record<string, unknown> };
  } catch (error) {
    const appError = toAppError(error);
    if (!appError) logger.error({ err: error }, 'unhandled MCP tool error');
    const body = appError
      ? { error: appError.code, message: appError.message, ...(appError.fields ? { errors: appError.fields } : {}) }
      : INTERNAL_ERROR.body;
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  }
}

/**
 * One MCP server per request (stateless Streamable HTTP): the tools an agent needs, over the same
 * services as REST. Scheduling tools act as the agent whose token came with the HTTP request.
 */
export function createMcpServer(deps: McpDeps, actor: () => Promise<Actor>, address: string): McpServer {
  const server = new McpServer({ name: 'agent-gateway', version: deps.version });

  server.registerTool(
    'get_token_analytics',
    {
      description: 'Price, liquidity, 24 h volume, trades, price change, FDV and market cap of a Solana token mint, from its DEX pairs.',
      inputSchema: { mint: z.string().describe('base58 token mint, 32 to 44 characters') },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ mint }) =>
      answer(async () => {
        await deps.tokenReads.spend(address);
        return presentAnalytics(await deps.tokens.analytics(mint));
      }, deps.logger),
  );

  server.registerTool(
    'get_token_safety',
    {
      description: 'A 0–100 safety score for a token mint with named, weighted checks and the inputs that were missing.',
      inputSchema: { mint: z.string().describe('base58 token mint, 32 to 44 characters') },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ mint }) =>
      answer(async () => {
        await deps.tokenReads.spend(address);
        return presentSafety(await deps.tokens.safety(mint));
      }, deps.logger),
  );

  server.registerTool(
    'list_bookings',
    {
      description:
        "The calling agent's bookings (confirmed and cancelled) intersecting [from, to), by start time. " +
        '`nextCursor` is null on the last page; otherwise pass it back as `after` (with the same from, to) for the next page.',
      inputSchema: {
        from: dateTime.optional(),
        to: dateTime.optional(),
        limit: z.number().int().min(1).max(BOOKING_LIMITS.listMax).optional().describe(`1 to ${BOOKING_LIMITS.listMax}; default ${BOOKING_LIMITS.listDefault}`),
        after: z.string().min(1).max(200).optional().describe('nextCursor of the previous page'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ from, to, limit, after }) =>
      answer(async () => {
        const page = await deps.bookings.list(
          await actor(),
          { from: from ? new Date(from) : undefined, to: to ? new Date(to) : undefined },
          limit ?? BOOKING_LIMITS.listDefault,
          after === undefined ? undefined : decodeBookingCursor(after),
        );
        return { items: page.items, nextCursor: page.nextCursor };
      }, deps.logger),
  );

  server.registerTool(
    'create_booking',
    {
      description: "Books [startsAt, endsAt) on the calling agent's calendar. Overlaps answer slot_taken.",
      inputSchema: { startsAt: dateTime, endsAt: dateTime, idempotencyKey: z.string().min(1).max(SCHEDULING_LIMITS.idempotencyKeyMaxLength).optional() },
    },
    ({ startsAt, endsAt, idempotencyKey }) =>
      answer(async () => {
        return toBookingItem(await deps.bookings.create(await actor(), { startsAt: new Date(startsAt), endsAt: new Date(endsAt) }, idempotencyKey));
      }, deps.logger),
  );

  server.registerTool(
    'cancel_booking',
    {
      description: "Soft-cancels one of the calling agent's bookings (idempotent); the slot is freed.",
      inputSchema: { bookingId: z.string().min(1) },
      annotations: { idempotentHint: true, destructiveHint: true },
    },
    ({ bookingId }) => answer(async () => toBookingItem(await deps.bookings.cancel(await actor(), bookingId)), deps.logger),
  );

  server.registerTool(
    'propose_slot',
    {
      description: 'Asks another agent to hand over the slot [startsAt, endsAt); the proposal starts pending.',
      inputSchema: { targetAgentId: z.string().min(1).max(SCHEDULING_LIMITS.agentIdMaxLength), startsAt: dateTime, endsAt: dateTime },
    },
    ({ targetAgentId, startsAt, endsAt }) =>
      answer(async () => presentProposal(await deps.proposals.create(await actor(), { targetAgentId, startsAt: new Date(startsAt), endsAt: new Date(endsAt) })), deps.logger),
  );

  server.registerTool(
    'availability',
    {
      description:
        `Free slots of \`duration\` minutes common to the calling agent and up to ${L.maxOtherAgents} others inside [from, to) (at most ${L.maxWindowDays} days), ` +
        'earliest first, every free grid start listed. Agents that do not share their free/busy with the caller (or do not exist) answer forbidden.',
      inputSchema: {
        agentIds: z.array(z.string().min(1).max(SCHEDULING_LIMITS.agentIdMaxLength)).max(L.maxOtherAgents).describe('the other agents; the caller is always included'),
        duration,
        from: dateTime,
        to: dateTime,
        granularity,
        limit: z.number().int().min(1).max(L.firstMax).optional().describe(`1 to ${L.firstMax}; default ${L.firstDefault}`),
        after: z.string().min(1).max(100).optional().describe('nextCursor of the previous page'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ agentIds, duration: minutes, from, to, granularity: step, limit, after }) =>
      answer(async () => {
        const page = await deps.availability.find(await actor(), {
          agentIds,
          durationMinutes: minutes,
          from: new Date(from),
          to: new Date(to),
          granularityMinutes: step ?? L.granularityDefault,
          first: limit ?? L.firstDefault,
          after: after === undefined ? undefined : decodeSlotCursor(after),
        });
        return presentAvailabilityPage(page);
      }, deps.logger),
  );

  server.registerTool(
    'propose_first_available',
    {
      description:
        'Finds the earliest free slot common to the calling agent and the target inside [from, to) and opens a pending proposal for it. ' +
        'slot_taken when a booking took it meanwhile (ask again); conflict when there is no common slot; forbidden when the target does not share its free/busy.',
      inputSchema: { targetAgentId: z.string().min(1).max(SCHEDULING_LIMITS.agentIdMaxLength), duration, from: dateTime, to: dateTime, granularity },
    },
    ({ targetAgentId, duration: minutes, from, to, granularity: step }) =>
      answer(
        async () =>
          presentProposal(
            await deps.proposals.proposeFirstAvailable(await actor(), {
              targetAgentId,
              durationMinutes: minutes,
              from: new Date(from),
              to: new Date(to),
              granularityMinutes: step ?? L.granularityDefault,
            }),
          ),
        deps.logger,
      ),
  );

  server.registerTool(
    'respond_to_proposal',
    {
      description: 'accept or reject (target), decline (target, final) or withdraw (proposer) a proposal.',
      inputSchema: { proposalId: z.string().min(1), decision: z.enum(['accept', 'reject', 'decline', 'withdraw']) },
    },
    ({ proposalId, decision }) => answer(async () => presentProposal(await deps.proposals[decision](await actor(), proposalId)), deps.logger),
  );

  return server;
}
