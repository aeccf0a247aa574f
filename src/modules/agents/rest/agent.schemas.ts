import { FREE_FORM_OBJECT_LIMITS, FREE_FORM_OBJECT_RULE } from '../../../platform/free-form-object.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { AGENT_LIMITS } from '../agent.service.js';
import { FREE_BUSY_VISIBILITIES } from '../entities/agent.entity.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';

/** Seed 000 `AgentCreate`: no properties other than these. */
export const agentCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: AGENT_LIMITS.nameMaxLength },
    // Bytes, depth and nested keys are checked by the agent service (one rule for every transport);
    // the top-level key count is also stated here so that the document shows the bound.
    metadata: { type: 'object', additionalProperties: true, maxProperties: FREE_FORM_OBJECT_LIMITS.maxKeys, description: FREE_FORM_OBJECT_RULE },
    config: { type: 'object', additionalProperties: true, maxProperties: FREE_FORM_OBJECT_LIMITS.maxKeys, description: FREE_FORM_OBJECT_RULE },
    idempotency_key: { type: 'string', minLength: 1, maxLength: AGENT_LIMITS.idempotencyKeyMaxLength },
    bootstrap: { type: 'boolean', const: true },
  },
} as const;

/** Seed 000 `Agent`. */
export const agentResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'public_token', 'created_at', 'next_step'],
  properties: {
    id: { type: 'string', minLength: 1 },
    public_token: { type: 'string', minLength: 1 },
    created_at: { type: 'string', format: 'date-time' },
    next_step: {
      type: 'object',
      additionalProperties: false,
      required: ['save_public_token', 'authorization', 'x_api_key', 'message'],
      properties: {
        save_public_token: { type: 'boolean', const: true },
        authorization: { type: 'string' },
        x_api_key: { type: 'string' },
        message: { type: 'string', minLength: 1 },
      },
    },
  },
} as const;

export const createAgentRoute = {
  operationId: 'createAgent',
  summary: 'Create an agent (bootstrap the first one, or a child of the caller)',
  description:
    'A child agent is created within its parent’s budget of AGENT_CREATE_PER_MIN creations a minute (then 429 `rate_limited`, with ' +
    '`Retry-After`) and its family’s AGENT_FAMILY_MAX agents, the root agent and all its descendants (then 409 `limit_exceeded`).',
  tags: ['scheduling'],
  security: SECURITY.agentOrNone,
  body: agentCreateBody,
  headers: {
    type: 'object',
    properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: AGENT_LIMITS.idempotencyKeyMaxLength } },
  },
  response: { 201: agentResponse, ...errorResponses(400, 401, 409, 429) },
} as const;

/** Who may ask for the caller's free/busy (`GET /api/availability`, `POST /api/proposals/first-available`). */
const freeBusyVisibility = {
  type: 'object',
  additionalProperties: false,
  required: ['visibility'],
  properties: {
    visibility: {
      type: 'string',
      enum: [...FREE_BUSY_VISIBILITIES],
      description: '`family` (the default): the agent itself, its parent and its children; `anyone`: every agent; `nobody`: the agent itself only.',
    },
  },
} as const;

export const freeBusyVisibilityRoute = {
  operationId: 'getFreeBusyVisibility',
  summary: 'Who may ask for the caller’s free/busy',
  tags: ['availability'],
  security: SECURITY.agent,
  response: { 200: freeBusyVisibility, ...errorResponses(401) },
} as const;

export const setFreeBusyVisibilityRoute = {
  operationId: 'setFreeBusyVisibility',
  summary: 'Set who may ask for the caller’s free/busy: family (the default), anyone or nobody',
  tags: ['availability'],
  security: SECURITY.agent,
  body: freeBusyVisibility,
  response: { 200: freeBusyVisibility, ...errorResponses(400, 401) },
} as const;
