import { tool, type ToolDefinition } from '../../../platform/mcp/tool.js';
import { CHANGE_FEED_LIMITS, EVENT_CURSOR, type BookingChangeFeed } from '../change-feed.service.js';

/** The change feed for agents that mirror a calendar: the same page REST and GraphQL answer. */
export function bookingChangeTools(feed: BookingChangeFeed): ToolDefinition<unknown>[] {
  return [
    tool<{ since?: string; limit: number; agentId?: string; family: boolean }>({
      name: 'booking_changes',
      description:
        "What happened to the calling agent's bookings after `since`, in commit order: each change has `cursor`, `type`, `occurredAt`, `agentId`, and " +
        'the booking as it is now (`booking`) or a tombstone (`deleted: {id, reason}`: drop it from your copy). Keep `nextSince` and pass it as `since` next ' +
        'time; while `hasMore` is true, ask again at once. Without `since`: no changes and `nextSince` is the head (call list_bookings for the calendar, then ' +
        'follow from it). The cursor is the `webhook-cursor` of webhook deliveries too. `cursor_expired`: the cursor is older than what is kept; list the ' +
        `calendar again and start from a new head. \`agentId\`: a child's feed; \`family: true\`: yours and your children's (at most ${CHANGE_FEED_LIMITS.familyMaxAgents} agents).`,
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          since: { type: 'string', pattern: EVENT_CURSOR.pattern, description: 'nextSince of the previous call, a webhook-cursor, or "0" for everything still kept' },
          limit: { type: 'integer', minimum: 1, maximum: CHANGE_FEED_LIMITS.pageMax, default: CHANGE_FEED_LIMITS.pageDefault, description: `1 to ${CHANGE_FEED_LIMITS.pageMax}` },
          agentId: { type: 'string', minLength: 1, maxLength: 128, description: "a child's id, to read its feed" },
          family: { type: 'boolean', default: false, description: "your feed and your children's in one cursor order (not with agentId)" },
        },
      },
      annotations: { readOnlyHint: true },
      run: async ({ since, limit, agentId, family }, { actor }) => feed.changes(await actor(), { since, limit, agentId, family }),
    }),
  ];
}
