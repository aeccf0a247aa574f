import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSchema, parse, validate, type GraphQLObjectType } from 'graphql';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { readFileSync } from 'node:fs';
import { SignJWT, UnsecuredJWT } from 'jose';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { Mailbox } from '../../factories/mailbox.js';
import { signIn, submitTool, type SignedInUser } from '../../factories/users.js';
import { apiKey, bearer, startTestApp, type TestApp, withoutCost } from '../../harness.js';

const JWT_SECRET = 'authorization-matrix-secret-0123456789abcdef';
const ADMIN_TOKEN = 'authorization-matrix-admin-token-0123456789';
/** Different budgets, so that a response's RateLimit-Limit says which one a request was counted against. */
const ANONYMOUS_READS_PER_MIN = 1_000;
const SIGNED_IN_READS_PER_MIN = 2_000;

interface OpenApiOperation {
  security?: Record<string, string[]>[];
}
type OpenApiDocument = { paths: Record<string, Record<string, OpenApiOperation>> };

/** Who an operation is for, read from its OpenAPI `security`. */
type Audience = 'public' | 'agent' | 'user' | 'user-optional' | 'admin';

function audienceOf(operation: OpenApiOperation): Audience {
  const schemes = (operation.security ?? []).map((requirement) => Object.keys(requirement).join('+'));
  if (schemes.length === 0) return 'public';
  if (schemes.includes('agentToken')) return 'agent'; // POST /api/agents also takes none, for the bootstrap
  if (schemes.includes('directoryJwt')) return schemes.includes('') ? 'user-optional' : 'user';
  if (schemes.includes('adminToken')) return 'admin';
  throw new Error(`unknown security ${JSON.stringify(operation.security)}`);
}

/** Everything a row needs to build a well-formed request: rows that belong to the victim. */
interface Victims {
  agent: AgentWithToken;
  bookingId: string;
  proposalId: string;
  webhookId: string;
  feedId: string;
  holdId: string;
  user: SignedInUser;
  toolId: number;
}

/**
 * One well-formed request per REST operation, aimed at the victim's rows. A new operation in
 * `/openapi.json` without a row here fails the first test.
 */
const REST_REQUESTS: Record<string, (v: Victims) => { url: string; payload?: Record<string, unknown> }> = {
  'GET /healthz': () => ({ url: '/healthz' }),
  'GET /readyz': () => ({ url: '/readyz' }),
  'POST /api/agents': () => ({ url: '/api/agents', payload: { name: 'intruder' } }),
  'GET /api/agents/me/free-busy-visibility': () => ({ url: '/api/agents/me/free-busy-visibility' }),
  'PUT /api/agents/me/free-busy-visibility': () => ({ url: '/api/agents/me/free-busy-visibility', payload: { visibility: 'anyone' } }),
  // The victim's calendar is the row: its free/busy is not shared with a sibling (family is the default).
  'GET /api/availability': (v) => ({ url: `/api/availability?agents=${v.agent.id}&duration=30&from=2033-04-01T00:00:00Z&to=2033-04-02T00:00:00Z` }),
  'POST /api/proposals/first-available': (v) => ({
    url: '/api/proposals/first-available',
    payload: { targetAgentId: v.agent.id, duration: 30, from: '2033-04-01T00:00:00Z', to: '2033-04-02T00:00:00Z' },
  }),
  'POST /api/bookings': (v) => ({ url: '/api/bookings', payload: { agentId: v.agent.id, startsAt: '2033-01-01T09:00:00Z', endsAt: '2033-01-01T10:00:00Z' } }),
  'GET /api/bookings': () => ({ url: '/api/bookings?from=2030-01-01T00:00:00Z&to=2040-01-01T00:00:00Z' }),
  'DELETE /api/bookings/{id}': (v) => ({ url: `/api/bookings/${v.bookingId}` }),
  'GET /api/bookings/{id}': (v) => ({ url: `/api/bookings/${v.bookingId}` }),
  'PATCH /api/bookings/{id}/reschedule': (v) => ({ url: `/api/bookings/${v.bookingId}/reschedule`, payload: { startsAt: '2033-01-02T09:00:00Z', endsAt: '2033-01-02T10:00:00Z' } }),
  'POST /api/bookings/group': (v) => ({ url: '/api/bookings/group', payload: { agentIds: [v.agent.id], startsAt: '2033-01-03T09:00:00Z', endsAt: '2033-01-03T10:00:00Z' } }),
  // The victim's calendar is the row, as for availability.
  'GET /api/availability/check': (v) => ({ url: `/api/availability/check?agent=${v.agent.id}&startsAt=2033-04-01T09:00:00Z&endsAt=2033-04-01T10:00:00Z` }),
  'GET /api/agents/{id}/availability-rules': (v) => ({ url: `/api/agents/${v.agent.id}/availability-rules` }),
  'PUT /api/agents/{id}/availability-rules': (v) => ({ url: `/api/agents/${v.agent.id}/availability-rules`, payload: { timeZone: 'UTC' } }),
  'DELETE /api/agents/{id}/availability-rules': (v) => ({ url: `/api/agents/${v.agent.id}/availability-rules` }),
  'POST /api/holds': (v) => ({ url: '/api/holds', payload: { agentIds: [v.agent.id], startsAt: '2033-01-04T09:00:00Z', endsAt: '2033-01-04T10:00:00Z' } }),
  'GET /api/holds': () => ({ url: '/api/holds' }),
  'GET /api/holds/{id}': (v) => ({ url: `/api/holds/${v.holdId}` }),
  'PATCH /api/holds/{id}/confirm': (v) => ({ url: `/api/holds/${v.holdId}/confirm` }),
  'DELETE /api/holds/{id}': (v) => ({ url: `/api/holds/${v.holdId}` }),
  'GET /api/bookings/{id}/occurrences': (v) => ({ url: `/api/bookings/${v.bookingId}/occurrences` }),
  // The victim's change feed, named by its agent id: only the agent and its parent read it.
  'GET /api/bookings/changes': (v) => ({ url: `/api/bookings/changes?since=0&agentId=${v.agent.id}` }),
  'POST /api/proposals': (v) => ({ url: '/api/proposals', payload: { targetAgentId: v.agent.id, startsAt: '2033-02-01T09:00:00Z', endsAt: '2033-02-01T10:00:00Z' } }),
  'GET /api/proposals': () => ({ url: '/api/proposals' }),
  'PATCH /api/proposals/{id}/accept': (v) => ({ url: `/api/proposals/${v.proposalId}/accept` }),
  'PATCH /api/proposals/{id}/reject': (v) => ({ url: `/api/proposals/${v.proposalId}/reject` }),
  'PATCH /api/proposals/{id}/decline': (v) => ({ url: `/api/proposals/${v.proposalId}/decline` }),
  'PATCH /api/proposals/{id}/withdraw': (v) => ({ url: `/api/proposals/${v.proposalId}/withdraw` }),
  'POST /api/webhooks': () => ({ url: '/api/webhooks', payload: { url: 'https://hooks.example.com/x', events: ['booking.created'] } }),
  'GET /api/webhooks': () => ({ url: '/api/webhooks' }),
  'DELETE /api/webhooks/{id}': (v) => ({ url: `/api/webhooks/${v.webhookId}` }),
  'POST /api/calendar-feeds': () => ({ url: '/api/calendar-feeds' }),
  'GET /api/calendar-feeds': () => ({ url: '/api/calendar-feeds' }),
  'DELETE /api/calendar-feeds/{id}': (v) => ({ url: `/api/calendar-feeds/${v.feedId}` }),
  // Public in the document: the feed token in the URL is its credential (calendar-feeds.test.ts).
  'GET /api/agents/{id}/calendar.ics': (v) => ({ url: `/api/agents/${v.agent.id}/calendar.ics` }),
  'GET /v1/tokens/{mint}/analytics': () => ({ url: '/v1/tokens/So11111111111111111111111111111111111111112/analytics' }),
  'GET /v1/tokens/{mint}/safety': () => ({ url: '/v1/tokens/So11111111111111111111111111111111111111112/safety' }),
  'GET /api/status': () => ({ url: '/api/status' }),
  'GET /api/tools': () => ({ url: '/api/tools' }),
  'POST /api/tools': () => ({ url: '/api/tools', payload: { name: 'Intruder tool', url: 'https://intruder.example.com', description: 'x', category_id: 1 } }),
  'GET /api/tools/{id}': (v) => ({ url: `/api/tools/${v.toolId}` }),
  'POST /api/tools/{id}/vote': (v) => ({ url: `/api/tools/${v.toolId}/vote`, payload: {} }),
  'GET /api/categories': () => ({ url: '/api/categories' }),
  'GET /api/leaderboard': () => ({ url: '/api/leaderboard' }),
  'GET /api/stats': () => ({ url: '/api/stats' }),
  'POST /api/auth/magic-link': () => ({ url: '/api/auth/magic-link', payload: { email: 'intruder@example.com' } }),
  'POST /api/auth/verify': () => ({ url: '/api/auth/verify', payload: { token: 'not-a-link-token' } }),
  'GET /api/v1/prices': () => ({ url: '/api/v1/prices' }),
  'GET /api/v1/prices/{gpu_slug}': () => ({ url: '/api/v1/prices/h100' }),
  'POST /api/v1/prices/snapshots': () => ({ url: '/api/v1/prices/snapshots', payload: { rows: [{ slug: 'h100', provider: 'intruder', spot_price_usd: 0.01, on_demand_price_usd: 0.02 }] } }),
};

/** Who a GraphQL root field is for (the schema does not say), and one well-formed operation on the victim's rows. */
interface GraphQLRow {
  audience: Audience;
  query: string;
  variables?: (v: Victims) => Record<string, unknown>;
}
const slot = { startsAt: '2033-03-01T09:00:00Z', endsAt: '2033-03-01T10:00:00Z' };
const byId = (id: keyof Victims) => (v: Victims) => ({ id: v[id] });

/** A new root field without a row here fails the GraphQL coverage test. */
const GRAPHQL_ROWS: Record<string, GraphQLRow> = {
  'Query.booking': { audience: 'agent', query: 'query($id: ID!) { booking(id: $id) { id } }', variables: byId('bookingId') },
  'Query.bookings': { audience: 'agent', query: '{ bookings { edges { node { id } } } }' },
  'Query.bookingChanges': {
    audience: 'agent',
    query: 'query($id: ID!) { bookingChanges(since: "0", agentId: $id) { nextSince changes { booking { id } } } }',
    variables: (v) => ({ id: v.agent.id }),
  },
  'Query.bookedSlots': { audience: 'agent', query: '{ bookedSlots(from: "2032-01-01T00:00:00Z", to: "2032-01-02T00:00:00Z") { startsAt } }' },
  'Query.freeBusy': { audience: 'agent', query: '{ freeBusy(from: "2032-01-01T00:00:00Z", to: "2032-01-02T00:00:00Z") { busy { startsAt } } }' },
  'Query.me': { audience: 'agent', query: '{ me { id } }' },
  'Query.occurrences': { audience: 'agent', query: 'query($id: ID!) { occurrences(bookingId: $id) { startsAt } }', variables: byId('bookingId') },
  'Query.previewBooking': {
    audience: 'agent',
    query: 'query($input: CreateBookingInput!) { previewBooking(input: $input) { available } }',
    variables: (v) => ({ input: { agentId: v.agent.id, ...slot } }),
  },
  'Query.proposal': { audience: 'agent', query: 'query($id: ID!) { proposal(id: $id) { id } }', variables: byId('proposalId') },
  'Query.proposals': { audience: 'agent', query: '{ proposals { id } }' },
  'Query.webhookDeliveries': { audience: 'agent', query: '{ webhookDeliveries { id } }' },
  'Query.webhooks': { audience: 'agent', query: '{ webhooks { id } }' },
  'Query.calendarFeeds': { audience: 'agent', query: '{ calendarFeeds { id } }' },
  'Query.slotCheck': {
    audience: 'agent',
    query: 'query($id: ID!) { slotCheck(agentId: $id, startsAt: "2033-04-01T09:00:00Z", endsAt: "2033-04-01T10:00:00Z") { available } }',
    variables: (v) => ({ id: v.agent.id }),
  },
  'Query.availabilityRules': { audience: 'agent', query: 'query($id: ID!) { availabilityRules(agentId: $id) { timeZone } }', variables: (v) => ({ id: v.agent.id }) },
  'Query.workingTime': {
    audience: 'agent',
    query: 'query($id: ID!) { workingTime(agentId: $id, from: "2033-04-01T00:00:00Z", to: "2033-04-08T00:00:00Z") { startsAt } }',
    variables: (v) => ({ id: v.agent.id }),
  },
  'Mutation.setAvailabilityRules': {
    audience: 'agent',
    query: 'mutation($id: ID!) { setAvailabilityRules(agentId: $id, input: { timeZone: "UTC" }) { timeZone } }',
    variables: (v) => ({ id: v.agent.id }),
  },
  'Mutation.clearAvailabilityRules': { audience: 'agent', query: 'mutation($id: ID!) { clearAvailabilityRules(agentId: $id) }', variables: (v) => ({ id: v.agent.id }) },
  'Query.holds': { audience: 'agent', query: '{ holds { id } }' },
  'Query.hold': { audience: 'agent', query: 'query($id: ID!) { hold(id: $id) { id } }', variables: byId('holdId') },
  'Mutation.createHold': {
    audience: 'agent',
    query: 'mutation($input: CreateHoldInput!) { createHold(input: $input) { id } }',
    variables: (v) => ({ input: { agentIds: [v.agent.id], ...slot } }),
  },
  'Mutation.confirmHold': { audience: 'agent', query: 'mutation($id: ID!) { confirmHold(id: $id) { hold { id } } }', variables: byId('holdId') },
  'Mutation.releaseHold': { audience: 'agent', query: 'mutation($id: ID!) { releaseHold(id: $id) { id } }', variables: byId('holdId') },
  'Mutation.createGroupBooking': {
    audience: 'agent',
    query: 'mutation($input: CreateGroupBookingInput!) { createGroupBooking(input: $input) { id } }',
    variables: (v) => ({ input: { agentIds: [v.agent.id], ...slot } }),
  },
  'Mutation.rescheduleBooking': {
    audience: 'agent',
    query: 'mutation($input: RescheduleBookingInput!) { rescheduleBooking(input: $input) { id } }',
    variables: (v) => ({ input: { id: v.bookingId, ...slot } }),
  },
  'Query.availability': {
    audience: 'agent',
    query: 'query($id: ID!) { availability(agentIds: [$id], duration: 30, from: "2033-04-01T00:00:00Z", to: "2033-04-02T00:00:00Z") { edges { node { startsAt } } } }',
    variables: (v) => ({ id: v.agent.id }),
  },
  'Mutation.setFreeBusyVisibility': { audience: 'agent', query: 'mutation { setFreeBusyVisibility(visibility: anyone) { id } }' },
  'Mutation.proposeFirstAvailable': {
    audience: 'agent',
    query: 'mutation($input: ProposeFirstAvailableInput!) { proposeFirstAvailable(input: $input) { id } }',
    variables: (v) => ({ input: { targetAgentId: v.agent.id, duration: 30, from: '2033-04-01T00:00:00Z', to: '2033-04-02T00:00:00Z' } }),
  },
  'Mutation.createCalendarFeed': { audience: 'agent', query: 'mutation { createCalendarFeed { feed { id } } }' },
  'Mutation.revokeCalendarFeed': { audience: 'agent', query: 'mutation($id: ID!) { revokeCalendarFeed(id: $id) }', variables: byId('feedId') },
  'Mutation.acceptProposal': { audience: 'agent', query: 'mutation($id: ID!) { acceptProposal(id: $id) { id } }', variables: byId('proposalId') },
  'Mutation.rejectProposal': { audience: 'agent', query: 'mutation($id: ID!) { rejectProposal(id: $id) { id } }', variables: byId('proposalId') },
  'Mutation.declineProposal': { audience: 'agent', query: 'mutation($id: ID!) { declineProposal(id: $id) { id } }', variables: byId('proposalId') },
  'Mutation.withdrawProposal': { audience: 'agent', query: 'mutation($id: ID!) { withdrawProposal(id: $id) { id } }', variables: byId('proposalId') },
  'Mutation.cancelBooking': { audience: 'agent', query: 'mutation($id: ID!) { cancelBooking(id: $id) { id } }', variables: byId('bookingId') },
  'Mutation.cancelOccurrence': {
    audience: 'agent',
    query: 'mutation($id: ID!) { cancelOccurrence(bookingId: $id, startsAt: "2032-01-01T09:00:00Z") { id } }',
    variables: byId('bookingId'),
  },
  'Mutation.createAgent': { audience: 'agent', query: 'mutation { createAgent(input: { name: "intruder" }) { agent { id } } }' },
  'Mutation.createBooking': {
    audience: 'agent',
    query: 'mutation($input: CreateBookingInput!) { createBooking(input: $input) { id } }',
    variables: (v) => ({ input: { agentId: v.agent.id, ...slot } }),
  },
  'Mutation.createProposal': {
    audience: 'agent',
    query: 'mutation($input: CreateProposalInput!) { createProposal(input: $input) { id } }',
    variables: (v) => ({ input: { targetAgentId: v.agent.id, ...slot } }),
  },
  'Mutation.deleteWebhook': { audience: 'agent', query: 'mutation($id: ID!) { deleteWebhook(id: $id) }', variables: byId('webhookId') },
  'Mutation.disableWebhook': { audience: 'agent', query: 'mutation($id: ID!) { disableWebhook(id: $id) { id } }', variables: byId('webhookId') },
  'Mutation.enableWebhook': { audience: 'agent', query: 'mutation($id: ID!) { enableWebhook(id: $id) { id } }', variables: byId('webhookId') },
  'Mutation.redeliverWebhook': {
    audience: 'agent',
    query: 'mutation { redeliverWebhook(deliveryId: "00000000-0000-4000-8000-000000000000") { id } }',
  },
  'Mutation.registerWebhook': { audience: 'agent', query: 'mutation { registerWebhook(input: { url: "https://intruder.example.com/hook" }) { webhook { id } } }' },
  'Subscription.bookingEvents': { audience: 'agent', query: 'subscription { bookingEvents { cursor } }' },
  'Mutation.submitTool': {
    audience: 'user',
    query: 'mutation { submitTool(input: { name: "Intruder", url: "https://intruder-tool.example.com", description: "x", categoryId: 1 }) { id } }',
  },
  'Mutation.toggleVote': { audience: 'user', query: 'mutation($id: Int!) { toggleVote(toolId: $id) { voted } }', variables: (v) => ({ id: v.toolId }) },
  'Query.categories': { audience: 'user-optional', query: '{ categories { id } }' },
  'Query.leaderboard': { audience: 'user-optional', query: '{ leaderboard { humans { id } } }' },
  'Query.stats': { audience: 'user-optional', query: '{ stats { totalTools } }' },
  'Query.tool': { audience: 'user-optional', query: 'query($id: Int!) { tool(id: $id) { id } }', variables: (v) => ({ id: v.toolId }) },
  'Query.tools': { audience: 'user-optional', query: '{ tools { tools { id } } }' },
  'Query.viewer': { audience: 'user-optional', query: '{ viewer { id } }' },
  'Query.cheapestGpu': { audience: 'public', query: '{ cheapestGpu(gpu: "h100", kind: SPOT) { provider } }' },
  'Query.gpuPriceHistory': { audience: 'public', query: '{ gpuPriceHistory(gpu: "h100") { provider } }' },
  'Query.gpuPrices': { audience: 'public', query: '{ gpuPrices { provider } }' },
  'Mutation.requestMagicLink': { audience: 'public', query: 'mutation { requestMagicLink(email: "intruder@example.com") }' },
  'Mutation.redeemMagicLink': { audience: 'public', query: 'mutation { redeemMagicLink(token: "not-a-link-token") { token } }' },
  'Subscription.priceSnapshotAdded': { audience: 'public', query: 'subscription { priceSnapshotAdded { id } }' },
};

/** Who an MCP tool is for, and its arguments aimed at the victim's rows. A new tool without a row fails the MCP coverage test. */
const MCP_ROWS: Record<string, { audience: 'public' | 'agent'; args: (v: Victims) => Record<string, unknown> }> = {
  get_token_analytics: { audience: 'public', args: () => ({ mint: 'So11111111111111111111111111111111111111112' }) },
  get_token_safety: { audience: 'public', args: () => ({ mint: 'So11111111111111111111111111111111111111112' }) },
  list_bookings: { audience: 'agent', args: () => ({}) },
  create_booking: { audience: 'agent', args: () => ({ ...slot }) },
  cancel_booking: { audience: 'agent', args: (v) => ({ bookingId: v.bookingId }) },
  booking_changes: { audience: 'agent', args: (v) => ({ since: '0', agentId: v.agent.id }) },
  propose_slot: { audience: 'agent', args: (v) => ({ targetAgentId: v.agent.id, ...slot }) },
  respond_to_proposal: { audience: 'agent', args: (v) => ({ proposalId: v.proposalId, decision: 'accept' }) },
  availability: { audience: 'agent', args: (v) => ({ agentIds: [v.agent.id], duration: 30, from: '2033-04-01T00:00:00Z', to: '2033-04-02T00:00:00Z' }) },
  propose_first_available: { audience: 'agent', args: (v) => ({ targetAgentId: v.agent.id, duration: 30, from: '2033-04-01T00:00:00Z', to: '2033-04-02T00:00:00Z' }) },
  check_slot: { audience: 'agent', args: (v) => ({ agentId: v.agent.id, ...slot }) },
  get_availability_rules: { audience: 'agent', args: (v) => ({ agentId: v.agent.id }) },
  set_availability_rules: { audience: 'agent', args: (v) => ({ agentId: v.agent.id, timeZone: 'UTC' }) },
  clear_availability_rules: { audience: 'agent', args: (v) => ({ agentId: v.agent.id }) },
  hold_slot: { audience: 'agent', args: (v) => ({ agentIds: [v.agent.id], ...slot }) },
  confirm_hold: { audience: 'agent', args: (v) => ({ holdId: v.holdId }) },
  release_hold: { audience: 'agent', args: (v) => ({ holdId: v.holdId }) },
  list_holds: { audience: 'agent', args: () => ({}) },
  create_group_booking: { audience: 'agent', args: (v) => ({ agentIds: [v.agent.id], ...slot }) },
  reschedule_booking: { audience: 'agent', args: (v) => ({ bookingId: v.bookingId, ...slot }) },
};

/** Tables a denied request must leave as they were. */
const WRITTEN_TABLES = [
  'agents',
  'bookings',
  'booking_slots',
  'holds',
  'availability_rules',
  'proposals',
  'webhooks',
  'booking_events',
  'tools',
  'votes',
  'users',
  'magic_link_tokens',
  'price_snapshots',
  'price_rows',
  'idempotency_keys',
  'webhook_deliveries',
  'calendar_feeds',
];

describe('authorization matrix', () => {
  let t: TestApp;
  const mailbox = new Mailbox();
  let victims: Victims;
  let otherAgent: AgentWithToken;
  let document: OpenApiDocument;
  /** Credentials that must be refused, by the audience they are presented to. */
  let hostile: Record<Exclude<Audience, 'public'>, [label: string, headers: Record<string, string>][]>;

  beforeAll(async () => {
    t = await startTestApp({
      mailer: mailbox,
      jobs: false,
      env: { JWT_SECRET, ADMIN_TOKEN, RATE_LIMIT_ANON_PER_MIN: String(ANONYMOUS_READS_PER_MIN), RATE_LIMIT_AUTH_PER_MIN: String(SIGNED_IN_READS_PER_MIN) },
    });
    const root = await bootstrapAgent(t);
    const agent = await createAgent(t, root, 'victim');
    otherAgent = await createAgent(t, root, 'intruder');
    const booking = await createBooking(t, agent, '2032-01-01T09:00:00Z', '2032-01-01T10:00:00Z');
    const proposal = await t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(agent.token), payload: { targetAgentId: root.id, startsAt: '2032-02-01T09:00:00Z', endsAt: '2032-02-01T10:00:00Z' } });
    expect(proposal.statusCode).toBe(201);
    const webhook = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: 'https://victim.example.com/hook', events: ['booking.created'] } });
    expect(webhook.statusCode).toBe(201);
    const user = await signIn(t, mailbox);
    const tool = await submitTool(t, user);
    const feed = await t.rest({ method: 'POST', url: '/api/calendar-feeds', headers: bearer(agent.token) });
    expect(feed.statusCode).toBe(201);
    // Its rules and a live hold (for the whole run) are rows of the victim too.
    expect((await t.rest({ method: 'PUT', url: '/api/agents/me/availability-rules', headers: bearer(agent.token), payload: { timeZone: 'UTC' } })).statusCode).toBe(200);
    const hold = await t.rest({ method: 'POST', url: '/api/holds', headers: bearer(agent.token), payload: { startsAt: '2032-03-01T09:00:00Z', endsAt: '2032-03-01T10:00:00Z', ttlSeconds: 900 } });
    expect(hold.statusCode).toBe(201);
    victims = {
      agent,
      bookingId: booking.id,
      proposalId: proposal.json<{ id: string }>().id,
      webhookId: webhook.json<{ id: string }>().id,
      feedId: feed.json<{ id: string }>().id,
      holdId: hold.json<{ id: string }>().id,
      user,
      toolId: tool.id,
    };
    document = (await t.rest({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    await t.app.listen({ port: 0, host: '127.0.0.1' }); // for graphql-ws and MCP clients

    const key = new TextEncoder().encode(JWT_SECRET);
    const sign = (secret: Uint8Array, expiresAt: number) =>
      new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(user.id).setIssuer('agent-gateway').setIssuedAt().setExpirationTime(expiresAt).sign(secret);
    const inAnHour = Math.floor(Date.now() / 1000) + 3600;
    const forged: [string, Record<string, string>][] = [
      ['a JWT with alg none', bearer(new UnsecuredJWT({}).setSubject(user.id).setIssuer('agent-gateway').setExpirationTime(inAnHour).encode())],
      ['a JWT signed with another key', bearer(await sign(new TextEncoder().encode('another-secret-0123456789abcdefghijklmnop'), inAnHour))],
      ['an expired JWT', bearer(await sign(key, Math.floor(Date.now() / 1000) - 60))],
    ];
    const garbage: [string, Record<string, string>][] = [
      ['no credential', {}],
      ['a garbage bearer', bearer('garbage')],
      ['a garbage X-API-Key', apiKey('garbage')],
    ];
    hostile = {
      agent: [...garbage, ...forged, ['a user JWT', bearer(user.token)], ['the admin token', bearer(ADMIN_TOKEN)]],
      user: [...garbage, ...forged, ['an agent token', bearer(agent.token)], ['the admin token', bearer(ADMIN_TOKEN)]],
      'user-optional': [...forged.filter(([label]) => label !== 'an expired JWT'), ['an agent token', bearer(agent.token)]],
      admin: [...garbage, ['an agent token', bearer(agent.token)], ['a user JWT', bearer(user.token)]],
    };
  });
  afterAll(() => t.close());

  const restOperations = () =>
    Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), audience: audienceOf(operation) })),
    );

  const tableCounts = async () =>
    Object.fromEntries(
      await Promise.all(WRITTEN_TABLES.map(async (table) => [table, (await t.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n] as const)),
    );

  it('has a row for every REST operation in /openapi.json, and none for an operation that is gone', () => {
    expect(Object.keys(REST_REQUESTS).sort()).toEqual(restOperations().map((operation) => operation.key).sort());
  });

  it('refuses every wrong credential on every REST operation that needs one with 401, writing nothing', async () => {
    const before = await tableCounts();
    const outcomes: string[] = [];
    for (const operation of restOperations()) {
      if (operation.audience === 'public' || operation.audience === 'user-optional') continue;
      const request = REST_REQUESTS[operation.key]!(victims);
      for (const [label, headers] of hostile[operation.audience]) {
        const response = await t.rest({ method: operation.method as 'GET', url: request.url, headers, ...(request.payload ? { payload: request.payload } : {}) });
        const body = response.json<Record<string, unknown>>();
        // Seed 001's routes answer { success: false, message }, the others { error, message }.
        const shapeOk = operation.audience === 'user' ? body.success === false && typeof body.message === 'string' : body.error === 'unauthorized' && typeof body.message === 'string';
        outcomes.push(`${operation.key} with ${label}: ${response.statusCode === 401 && shapeOk ? 'as documented' : `${response.statusCode} ${response.body.slice(0, 120)}`}`);
      }
    }
    expect(outcomes.filter((line) => !line.endsWith('as documented'))).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(100);
    expect(await tableCounts()).toEqual(before);
  });

  it('serves the directory reads to a forged or foreign credential as to no credential, on the stricter anonymous budget', async () => {
    const outcomes: string[] = [];
    for (const operation of restOperations().filter((candidate) => candidate.audience === 'user-optional')) {
      const request = REST_REQUESTS[operation.key]!(victims);
      const signedIn = await t.rest({ method: 'GET', url: request.url, headers: bearer(victims.user.token) });
      expect(signedIn.headers['ratelimit-limit']).toBe(String(SIGNED_IN_READS_PER_MIN));
      for (const [label, headers] of hostile['user-optional']) {
        const response = await t.rest({ method: 'GET', url: request.url, headers });
        const limit = response.headers['ratelimit-limit'];
        outcomes.push(`${operation.key} with ${label}: ${response.statusCode === 200 && limit === String(ANONYMOUS_READS_PER_MIN) ? 'anonymous' : `${response.statusCode}, limit ${String(limit)}`}`);
      }
    }
    expect(outcomes.filter((line) => !line.endsWith('anonymous'))).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(5 * 3);
  });

  it("answers another agent's token on the victim's rows with 403 or 404, shows none of them in any list, and writes nothing", async () => {
    const before = await tableCounts();
    const victimIds = [victims.agent.id, victims.bookingId, victims.proposalId, victims.webhookId, victims.feedId, victims.holdId];
    const outcomes: string[] = [];
    for (const operation of restOperations().filter((candidate) => candidate.audience === 'agent')) {
      // Availability and the slot check ask about the victim's calendar, so they are refused like a row of the victim's;
      // the change feed names the victim (agentId); a group booking or a hold on the victim's calendar too (the intruder acts for its own calendar and its children's).
      const onVictim = ['GET /api/availability', 'GET /api/availability/check', 'GET /api/bookings/changes', 'POST /api/bookings/group', 'POST /api/holds'].includes(operation.key);
      const expected = operation.key.includes('{id}') || onVictim ? [403, 404] : operation.method === 'GET' ? [200] : [];
      if (expected.length === 0) continue; // creates: what the intruder may write for itself is not the victim's
      const request = REST_REQUESTS[operation.key]!(victims);
      const response = await t.rest({ method: operation.method as 'GET', url: request.url, headers: bearer(otherAgent.token), ...(request.payload ? { payload: request.payload } : {}) });
      const leaked = victimIds.filter((id) => response.body.includes(id));
      outcomes.push(`${operation.key}: ${expected.includes(response.statusCode) && leaked.length === 0 ? 'denied' : `${response.statusCode}, leaks ${leaked.join(', ')}`}`);
    }
    expect(outcomes.filter((line) => !line.endsWith('denied'))).toEqual([]);
    expect(outcomes).toHaveLength(27);
    expect(await tableCounts()).toEqual(before);
  });

  const committedSchema = () => buildSchema(readFileSync(new URL('../../../schema/schema.graphql', import.meta.url), 'utf8'));
  const rootFields = () => {
    const schema = committedSchema();
    return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]
      .filter((type): type is GraphQLObjectType => type !== null && type !== undefined)
      .flatMap((type) => Object.keys(type.getFields()).map((field) => `${type.name}.${field}`));
  };

  const graphql = async (row: GraphQLRow, headers: Record<string, string>) => {
    const response = await t.rest({ method: 'POST', url: '/graphql', headers, payload: { query: row.query, variables: row.variables?.(victims) ?? {} } });
    return { status: response.statusCode, body: response.json<{ data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] }>(), text: response.body };
  };

  it('has a row for every GraphQL root field in the schema, and none for a field that is gone', () => {
    expect(Object.keys(GRAPHQL_ROWS).sort()).toEqual(rootFields().sort());
  });

  it('has only operations the schema accepts, so that a refusal is about the credential', () => {
    const schema = committedSchema();
    const invalid = Object.entries(GRAPHQL_ROWS).flatMap(([field, row]) => validate(schema, parse(row.query)).map((error) => `${field}: ${error.message}`));
    expect(invalid).toEqual([]);
  });

  it('refuses every wrong credential on every GraphQL query and mutation that needs one with unauthorized, writing nothing', async () => {
    const before = await tableCounts();
    const outcomes: string[] = [];
    for (const [field, row] of Object.entries(GRAPHQL_ROWS)) {
      if (row.audience === 'public' || row.audience === 'user-optional' || field.startsWith('Subscription.')) continue;
      for (const [label, headers] of hostile[row.audience]) {
        const { body, text } = await graphql(row, headers);
        const code = body.errors?.[0]?.extensions?.code;
        outcomes.push(`${field} with ${label}: ${code === 'unauthorized' && !body.data?.[field.split('.')[1]!] ? 'unauthorized' : text.slice(0, 160)}`);
      }
    }
    expect(outcomes.filter((line) => !line.endsWith(': unauthorized'))).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(200);
    expect(await tableCounts()).toEqual(before);
  });

  it('answers the directory reads to a forged or foreign credential as to no credential', async () => {
    const outcomes: string[] = [];
    for (const [field, row] of Object.entries(GRAPHQL_ROWS).filter(([, candidate]) => candidate.audience === 'user-optional')) {
      const anonymous = await graphql(row, {});
      for (const [label, headers] of hostile['user-optional']) {
        const { body } = await graphql(row, headers);
        outcomes.push(`${field} with ${label}: ${JSON.stringify(withoutCost(body)) === JSON.stringify(withoutCost(anonymous.body)) ? 'anonymous' : JSON.stringify(body).slice(0, 160)}`);
      }
    }
    expect(outcomes.filter((line) => !line.endsWith(': anonymous'))).toEqual([]);
  });

  it("answers another agent's token on the victim's rows with forbidden or not_found, and shows none of them", async () => {
    const before = await tableCounts();
    const victimIds = [victims.bookingId, victims.proposalId, victims.webhookId, victims.feedId, victims.holdId];
    const outcomes: string[] = [];
    // Creates on the intruder's own calendar are not the victim's; a group booking or hold naming the victim's calendar is.
    const onVictim = ['Mutation.createGroupBooking', 'Mutation.createHold'];
    for (const [field, row] of Object.entries(GRAPHQL_ROWS)) {
      if (row.audience !== 'agent' || field.startsWith('Subscription.') || ((field.startsWith('Mutation.create') && !onVictim.includes(field)) || field === 'Mutation.registerWebhook')) continue;
      const { body, text } = await graphql(row, bearer(otherAgent.token));
      const code = body.errors?.[0]?.extensions?.code;
      const leaked = victimIds.filter((id) => text.includes(id));
      const denied = code === 'forbidden' || code === 'not_found' || (code === undefined && !row.variables);
      outcomes.push(`${field}: ${denied && leaked.length === 0 ? 'nothing shown' : text.slice(0, 160)}`);
    }
    expect(outcomes.filter((line) => !line.endsWith(': nothing shown'))).toEqual([]);
    expect(await tableCounts()).toEqual(before);
  });

  it('refuses every wrong credential on the bookingEvents subscription over graphql-ws with unauthorized', async () => {
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    const outcomes: string[] = [];
    for (const [label, headers] of hostile.agent) {
      const client = createClient({ url: `ws://127.0.0.1:${address.port}/graphql`, webSocketImpl: WebSocket, connectionParams: headers, retryAttempts: 0, lazy: true });
      try {
        const outcome = await new Promise<string>((resolve) => {
          client.subscribe(
            { query: GRAPHQL_ROWS['Subscription.bookingEvents']!.query },
            {
              next: (value) => resolve(value.errors?.[0]?.extensions?.code === 'unauthorized' && !value.data ? 'unauthorized' : JSON.stringify(value).slice(0, 160)),
              error: (error) => resolve(`error ${error instanceof Error ? error.message : JSON.stringify(error)}`),
              complete: () => resolve('completed without an answer'),
            },
          );
        });
        outcomes.push(`bookingEvents with ${label}: ${outcome}`);
      } finally {
        await client.dispose();
      }
    }
    expect(outcomes.filter((line) => !line.endsWith(': unauthorized'))).toEqual([]);
    expect(outcomes).toHaveLength(hostile.agent.length);
  });

  describe('MCP tools', () => {
    const clients: McpClient[] = [];
    const connect = async (headers: Record<string, string>) => {
      const address = t.app.server.address();
      if (!address || typeof address === 'string') throw new Error('no address');
      const client = new McpClient({ name: 'authorization-matrix', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`), { requestInit: { headers } }));
      clients.push(client);
      return client;
    };
    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close()));
    });

    it('has a row for every tool the server lists, and none for a tool that is gone', async () => {
      const { tools } = await (await connect({})).listTools();
      expect(Object.keys(MCP_ROWS).sort()).toEqual(tools.map((tool) => tool.name).sort());
    });

    it("refuses every wrong credential, and another agent's token on the victim's rows, writing nothing", async () => {
      const before = await tableCounts();
      const outcomes: string[] = [];
      const call = async (client: McpClient, name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args });
        const [content] = result.content as { type: string; text: string }[];
        return { isError: result.isError === true, text: content!.text };
      };
      for (const [name, row] of Object.entries(MCP_ROWS).filter(([, candidate]) => candidate.audience === 'agent')) {
        for (const [label, headers] of hostile.agent.filter(([, candidate]) => !('x-api-key' in candidate))) {
          const { isError, text } = await call(await connect(headers), name, row.args(victims));
          outcomes.push(`${name} with ${label}: ${isError && (JSON.parse(text) as { error?: string }).error === 'unauthorized' ? 'refused' : text.slice(0, 160)}`);
        }
        if (
          [
            'cancel_booking',
            'booking_changes',
            'respond_to_proposal',
            'availability',
            'propose_first_available',
            'check_slot',
            'get_availability_rules',
            'set_availability_rules',
            'clear_availability_rules',
            'hold_slot',
            'confirm_hold',
            'release_hold',
            'create_group_booking',
            'reschedule_booking',
          ].includes(name)
        ) {
          const { isError, text } = await call(await connect(bearer(otherAgent.token)), name, row.args(victims));
          const code = (JSON.parse(text) as { error?: string }).error;
          outcomes.push(`${name} with another agent's token: ${isError && (code === 'forbidden' || code === 'not_found') ? 'refused' : text.slice(0, 160)}`);
        }
      }
      expect(outcomes.filter((line) => !line.endsWith(': refused'))).toEqual([]);
      expect(outcomes.length).toBeGreaterThanOrEqual(5 * 8 + 3);
      expect(await tableCounts()).toEqual(before);
    });
  });
});
