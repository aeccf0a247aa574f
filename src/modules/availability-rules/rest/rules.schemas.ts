import { errorResponses } from '../../../platform/http/error-schemas.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { RULES_EXAMPLE, rulesInputSchema, rulesViewSchema } from '../rules.schema.js';

const agentParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, description: 'The agent: the caller itself or one of its children (`me`: the caller).' } },
} as const;

const WHO = 'The caller’s own rules at `/api/agents/me/…`; a child’s at `/api/agents/{id}/…` (the agent and its parent may read and change them).';

export const getRulesRoute = {
  operationId: 'getAvailabilityRules',
  summary: 'An agent’s availability rules',
  description: `${WHO} 404 \`not_found\` when the agent has none (it then behaves as every agent did before rules: overlaps only).`,
  tags: ['availability'],
  security: SECURITY.agent,
  params: agentParams,
  response: { 200: rulesViewSchema, ...errorResponses(401, 403, 404) },
} as const;

export const putRulesRoute = {
  operationId: 'setAvailabilityRules',
  summary: 'Replace an agent’s availability rules',
  description:
    `${WHO} The rules replace the previous ones whole (an absent field takes its default). They bind what other agents take from this calendar ` +
    '(availability, first-available proposals, proposals at accept, holds, group bookings) and, with `enforceOnOwnBookings`, its own creates. ' +
    'Buffers are kept by the database around every booking written after the change. 400 names the field that is wrong.',
  tags: ['availability'],
  security: SECURITY.agent,
  params: agentParams,
  body: { ...rulesInputSchema, examples: [RULES_EXAMPLE] },
  response: { 200: rulesViewSchema, ...errorResponses(400, 401, 403, 404) },
} as const;

export const deleteRulesRoute = {
  operationId: 'clearAvailabilityRules',
  summary: 'Remove an agent’s availability rules',
  description: `${WHO} The agent then behaves as one without rules; bookings already written keep the buffers they block.`,
  tags: ['availability'],
  security: SECURITY.agent,
  params: agentParams,
  response: { 204: { type: 'null', description: 'Removed (also when there were none)' }, ...errorResponses(401, 403, 404) },
} as const;
