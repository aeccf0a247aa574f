import { AFTER_QUERY_PARAMETER, NEXT_PAGE_LINK_HEADER } from '../../../platform/http/next-page-link.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { PROPOSAL_STATUSES } from '../entities/proposal.entity.js';
import { PROPOSAL_LIMITS } from '../proposal.service.js';
import { availabilitySearchProperties } from '../../availability/index.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../platform/api-limits.js';
import { PROPOSAL_ARGUMENTS } from '../proposal.arguments.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** Seed 000 `ProposalCreate`: no other properties allowed. */
export const proposalCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['targetAgentId', 'startsAt', 'endsAt'],
  properties: {
    targetAgentId: PROPOSAL_ARGUMENTS.targetAgentId,
    startsAt: dateTime,
    endsAt: dateTime,
  },
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
    status: { type: 'string', enum: [...PROPOSAL_STATUSES] },
    createdAt: dateTime,
  },
} as const;

export const createProposalRoute = {
  operationId: 'createProposal',
  summary: 'Ask another agent to transfer a slot',
  description: 'At most PENDING_PROPOSALS_MAX proposals from one agent to one target are pending at a time; the next is 409 `limit_exceeded`.',
  tags: ['scheduling'],
  security: SECURITY.agent,
  headers: { type: 'object', properties: { 'idempotency-key': IDEMPOTENCY_KEY_HEADER } },
  body: proposalCreateBody,
  response: { 201: proposalItem, ...errorResponses(400, 401, 409) },
} as const;

export const decideProposalRoute = (operationId: string, summary: string) =>
  ({
    operationId,
    summary,
    tags: ['scheduling'],
    security: SECURITY.agent,
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
    response: { 200: proposalItem, ...errorResponses(400, 401, 403, 404, 409) },
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
      role: { type: 'string', enum: ['incoming', 'outgoing'] },
      status: { type: 'string', enum: [...PROPOSAL_STATUSES] },
      limit: { type: 'integer', minimum: 1, maximum: PROPOSAL_LIMITS.listMax, default: PROPOSAL_LIMITS.listDefault },
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
    targetAgentId: { type: 'string', minLength: 1, maxLength: PROPOSAL_LIMITS.agentIdMaxLength },
    ...availabilitySearchProperties,
  },
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
  headers: { type: 'object', properties: { 'idempotency-key': IDEMPOTENCY_KEY_HEADER } },
  body: proposeFirstAvailableBody,
  response: { 201: proposalItem, ...errorResponses(400, 401, 403, 409) },
} as const;
