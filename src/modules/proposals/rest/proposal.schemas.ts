import { AFTER_QUERY_PARAMETER, NEXT_PAGE_LINK_HEADER } from '../../../platform/http/next-page-link.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { PROPOSAL_STATUSES } from '../entities/proposal.entity.js';
import { PROPOSAL_LIMITS } from '../proposal.service.js';
import { availabilitySearchProperties } from '../../availability/index.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';
import { idempotencyKeyHeader } from '../../bookings/index.js';
import { PROPOSAL_ARGUMENTS } from '../proposal.arguments.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

const exampleProposal = {
  id: '3b8f2d71-9c4e-4a1b-8e6f-5d2c7a9e0b14',
  proposerAgentId: '6c1d4c1e-2d3b-4f6a-8e0a-5b9d7e2f1c34',
  targetAgentId: '9e4a7b20-1f3c-4d8e-a6b5-c2d0f7e1a389',
  startsAt: '2031-05-06T14:00:00.000Z',
  endsAt: '2031-05-06T14:30:00.000Z',
  status: 'pending',
  createdAt: '2031-05-01T09:20:05.118Z',
} as const;

/** Seed 000 `ProposalCreate`: no other properties allowed. */
export const proposalCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['targetAgentId', 'startsAt', 'endsAt'],
  properties: {
    // Its description is the rule's noun phrase: a refusal says `must be <description>` (platform/http/validation.ts).
    targetAgentId: PROPOSAL_ARGUMENTS.targetAgentId,
    startsAt: { ...dateTime, description: 'The first instant of the slot wanted, with an offset.' },
    endsAt: { ...dateTime, description: 'The instant it ends (not included); after startsAt.' },
  },
  examples: [{ targetAgentId: exampleProposal.targetAgentId, startsAt: '2031-05-06T14:00:00Z', endsAt: '2031-05-06T14:30:00Z' }],
} as const;

/** Seed 000 `ProposalItem` (all fields required). */
export const proposalItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'proposerAgentId', 'targetAgentId', 'startsAt', 'endsAt', 'status', 'createdAt'],
  properties: {
    id: { type: 'string' },
    proposerAgentId: { type: 'string' },
    targetAgentId: { type: 'string' },
    startsAt: dateTime,
    endsAt: dateTime,
    status: { type: 'string', enum: [...PROPOSAL_STATUSES], description: '`pending` until accepted, declined or withdrawn (each final).' },
    createdAt: dateTime,
  },
  examples: [exampleProposal],
} as const;

export const createProposalRoute = {
  operationId: 'createProposal',
  summary: 'Ask another agent to transfer a slot',
  description:
    'Opens a pending proposal asking `targetAgentId` to transfer [startsAt, endsAt) to the caller; nothing moves until the target accepts. ' +
    'An unknown target is a 400 naming `targetAgentId`. ' +
    'At most PENDING_PROPOSALS_MAX proposals from one agent to one target are pending at a time; the next is 409 `limit_exceeded`.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  body: proposalCreateBody,
  response: { 201: { ...proposalItem, description: 'The proposal, pending' }, ...errorResponses(400, 401, 409) },
} as const;

export const decideProposalRoute = (operationId: string, summary: string, description: string) =>
  ({
    operationId,
    summary,
    description: `${description} A caller who may not take this decision is 403 \`forbidden\`; an unknown id 404 \`not_found\`.`,
    tags: ['scheduling'],
    security: SECURITY.agent,
    params: {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string', minLength: 1, description: 'The proposal’s id.', examples: [exampleProposal.id] } },
    },
    response: { 200: { ...proposalItem, description: 'The proposal after the decision' }, ...errorResponses(400, 401, 403, 404, 409) },
  }) as const;

export const listProposalsRoute = {
  operationId: 'listProposals',
  summary: 'The caller’s proposals, incoming (caller is the target) and/or outgoing',
  description: 'Newest first. When more proposals follow than `limit`, the answer carries `Link: <…>; rel="next"`: the URL of the next page.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  querystring: {
    type: 'object',
    properties: {
      role: {
        type: 'string',
        enum: ['incoming', 'outgoing'],
        description: '`incoming`: the caller is the target; `outgoing`: the caller proposed. Omitted: both.',
        examples: ['incoming'],
      },
      status: { type: 'string', enum: [...PROPOSAL_STATUSES], description: 'Only proposals in this status. Omitted: all.', examples: ['pending'] },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: PROPOSAL_LIMITS.listMax,
        default: PROPOSAL_LIMITS.listDefault,
        description: 'The most proposals one page holds.',
      },
      after: AFTER_QUERY_PARAMETER,
    },
  },
  response: {
    200: {
      description: 'A page of proposals',
      headers: NEXT_PAGE_LINK_HEADER,
      type: 'object',
      additionalProperties: false,
      required: ['items'],
      properties: { items: { type: 'array', items: proposalItem } },
    },
    ...errorResponses(400, 401),
  },
} as const;

export const proposeFirstAvailableBody = {
  type: 'object',
  additionalProperties: false,
  required: ['targetAgentId', 'duration', 'from', 'to'],
  properties: {
    targetAgentId: {
      type: 'string',
      minLength: 1,
      maxLength: PROPOSAL_LIMITS.agentIdMaxLength,
      description: 'The agent whose calendar is searched with the caller’s and who is asked for the slot.',
    },
    ...availabilitySearchProperties,
  },
  examples: [{ targetAgentId: exampleProposal.targetAgentId, duration: 30, from: '2031-05-06T08:00:00Z', to: '2031-05-06T18:00:00Z', granularity: 15 }],
} as const;

export const proposeFirstAvailableRoute = {
  operationId: 'proposeFirstAvailable',
  summary: 'Propose the earliest free slot common to the caller and the target',
  description:
    'Finds the earliest slot of `duration` minutes free on both calendars inside [from, to), as GET /api/availability does (with its ' +
    'visibility rule: 403 `forbidden` for a target that does not share its free/busy, or does not exist), and opens a pending proposal for it. ' +
    '409 `slot_taken` when a booking took that slot before the proposal was written (ask again for the next one); 409 `conflict` when the ' +
    'window holds no common free slot; 409 `limit_exceeded` when PENDING_PROPOSALS_MAX proposals to that target are pending already.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  body: proposeFirstAvailableBody,
  response: { 201: { ...proposalItem, description: 'The proposal for the first common free slot, pending' }, ...errorResponses(400, 401, 403, 409) },
} as const;
