import { FREE_FORM_OBJECT_LIMITS, FREE_FORM_OBJECT_RULE } from '../../../platform/free-form-object.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { AGENT_LIMITS } from '../agent.service.js';
import { FREE_BUSY_VISIBILITIES } from '../entities/agent.entity.js';
import { errorResponses } from '../../../platform/http/error-schemas.js';
import { NEXT_STEP } from '../agent.view.js';

/** Seed 000 `AgentCreate`: no properties other than these. */
export const agentCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: AGENT_LIMITS.nameMaxLength, description: 'A label for people; not unique.' },
    // Bytes, depth and nested keys are checked by the agent service (one rule for every transport);
    // the top-level key count is also stated here so that the document shows the bound.
    metadata: { type: 'object', additionalProperties: true, maxProperties: FREE_FORM_OBJECT_LIMITS.maxKeys, description: FREE_FORM_OBJECT_RULE },
    config: { type: 'object', additionalProperties: true, maxProperties: FREE_FORM_OBJECT_LIMITS.maxKeys, description: FREE_FORM_OBJECT_RULE },
    idempotency_key: {
      type: 'string',
      minLength: 1,
      maxLength: AGENT_LIMITS.idempotencyKeyMaxLength,
      description: 'The same as the Idempotency-Key header (both sent: they must match). A key already used answers 409 `conflict`.',
    },
    bootstrap: { type: 'boolean', const: true, description: 'Claim the first agent of a new installation, without a credential.' },
  },
  examples: [{ name: 'calendar-assistant', metadata: { team: 'ops' } }],
} as const;

/** Seed 000 `Agent`. */
export const agentResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'public_token', 'created_at', 'next_step'],
  properties: {
    id: { type: 'string', minLength: 1 },
    public_token: { type: 'string', minLength: 1, description: '`agt_…`: the agent’s credential, shown only in this answer (stored hashed).' },
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
  description: 'The new agent and its token',
  examples: [
    {
      id: '6c1d4c1e-2d3b-4f6a-8e0a-5b9d7e2f1c34',
      public_token: 'agt_3q2x9Lr0bW8kVt5ZfN1mYc7HsJd4PgEa',
      created_at: '2031-05-01T09:00:00.000Z',
      next_step: NEXT_STEP,
    },
  ],
} as const;

export const createAgentRoute = {
  operationId: 'createAgent',
  summary: 'Create an agent (bootstrap the first one, or a child of the caller)',
  description:
    'With `bootstrap: true` and no credential, claims the first agent of a new installation (401 with a credential; 409 `bootstrap_claimed` ' +
    'once an installation has its first agent, whatever is sent). Otherwise the caller’s credential is required and the new agent becomes ' +
    'its child. The answer holds the new agent’s `public_token` once: it is stored hashed and cannot be shown again. ' +
    'A child agent is created within its parent’s budget of AGENT_CREATE_PER_MIN creations a minute (then 429 `rate_limited`, with ' +
    '`Retry-After`) and its family’s AGENT_FAMILY_MAX agents, the root agent and all its descendants (then 409 `limit_exceeded`).',
  tags: ['scheduling'],
  security: SECURITY.agentOrNone,
  body: agentCreateBody,
  headers: {
    type: 'object',
    properties: {
      'idempotency-key': {
        type: 'string',
        minLength: 1,
        maxLength: AGENT_LIMITS.idempotencyKeyMaxLength,
        description: 'Makes the creation happen once: a key already used answers 409 `conflict` and creates nothing. The body’s `idempotency_key` counts the same.',
        examples: ['7b0e3c2a-agent-create-1'],
      },
    },
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
  description: 'Who may ask for the caller’s free/busy',
  examples: [{ visibility: 'family' }],
} as const;

export const freeBusyVisibilityRoute = {
  operationId: 'getFreeBusyVisibility',
  summary: 'Who may ask for the caller’s free/busy',
  description:
    'The setting `GET /api/availability` and `POST /api/proposals/first-available` apply when another agent names the caller: ' +
    '`family` (the default), `anyone` or `nobody`. The caller itself always sees its own calendar.',
  tags: ['availability'],
  security: SECURITY.agent,
  response: { 200: freeBusyVisibility, ...errorResponses(401) },
} as const;

export const setFreeBusyVisibilityRoute = {
  operationId: 'setFreeBusyVisibility',
  summary: 'Set who may ask for the caller’s free/busy: family (the default), anyone or nobody',
  description:
    'Takes effect for the next search. An agent that may not see the caller’s free/busy is answered 403 `forbidden`, the same answer as for ' +
    'an agent that does not exist, so the setting itself is not revealed. Answers the setting now in force.',
  tags: ['availability'],
  security: SECURITY.agent,
  body: freeBusyVisibility,
  response: { 200: freeBusyVisibility, ...errorResponses(400, 401) },
} as const;
