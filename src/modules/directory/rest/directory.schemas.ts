import { httpUrlSchema, NOT_BLANK } from '../../../platform/formats.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { AUTH_METHODS, PRICING_MODELS } from '../entities/tool.entity.js';
import { ACCOUNT_LIMITS } from '../limits.js';
import { CATEGORY_SLUG, TOOL_LIMITS, TOOL_SORTS } from '../tool.service.js';

const dateTime = { type: 'string', format: 'date-time' } as const;
const notBlank = { pattern: NOT_BLANK.pattern, description: NOT_BLANK.description } as const;

export const errorBody = {
  type: 'object',
  required: ['success', 'message'],
  properties: { success: { type: 'boolean', const: false }, message: { type: 'string' }, errors: { type: 'object', additionalProperties: { type: 'string' } } },
} as const;

export const errors = (...statuses: number[]) => Object.fromEntries([...statuses, 429, 500].map((status) => [status, errorBody]));

export const toolItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'url', 'description', 'vote_count', 'slug', 'category_name', 'category_slug', 'submission_source', 'capabilities', 'pricing_model', 'created_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    url: { type: 'string' },
    description: { type: 'string' },
    vote_count: { type: 'integer' },
    slug: { type: 'string' },
    category_name: { type: 'string' },
    category_slug: { type: 'string' },
    submission_source: { type: 'string', enum: ['human', 'agent'] },
    capabilities: { type: 'array', items: { type: 'string' } },
    pricing_model: { type: ['string', 'null'], enum: [...PRICING_MODELS, null] },
    created_at: dateTime,
  },
} as const;

export const fullTool = {
  ...toolItem,
  required: [...toolItem.required, 'api_endpoint', 'auth_method', 'submitted_by_agent'],
  properties: {
    ...toolItem.properties,
    api_endpoint: { type: ['string', 'null'] },
    auth_method: { type: ['string', 'null'], enum: [...AUTH_METHODS, null] },
    submitted_by_agent: { type: ['string', 'null'] },
  },
} as const;

const agentHeader = {
  type: 'object',
  properties: { 'x-agent-id': { type: 'string', minLength: 1, maxLength: TOOL_LIMITS.agentIdMaxLength } },
} as const;

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;

export const listToolsRoute = {
  operationId: 'listTools',
  summary: 'The catalogue of approved tools',
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  querystring: {
    type: 'object',
    properties: {
      category: { type: 'string', minLength: 1, maxLength: CATEGORY_SLUG.maxLength, pattern: CATEGORY_SLUG.pattern, description: CATEGORY_SLUG.description },
      sort: { type: 'string', enum: [...TOOL_SORTS], default: 'votes' },
      page: { type: 'integer', minimum: 1, maximum: TOOL_LIMITS.pageMax, default: 1 },
      limit: { type: 'integer', minimum: 1, maximum: TOOL_LIMITS.pageSizeMax, default: TOOL_LIMITS.pageSizeDefault },
    },
  },
  response: {
    200: {
      type: 'object',
      required: ['success', 'tools', 'page', 'totalPages', 'totalTools'],
      properties: {
        success: { type: 'boolean' },
        tools: { type: 'array', items: toolItem },
        page: { type: 'integer' },
        totalPages: { type: 'integer' },
        totalTools: { type: 'integer' },
      },
    },
    ...errors(400),
  },
} as const;

export const getToolRoute = {
  operationId: 'getTool',
  summary: 'One tool with all its metadata',
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  params: idParams,
  response: { 200: { type: 'object', required: ['success', 'tool'], properties: { success: { type: 'boolean' }, tool: fullTool } }, ...errors(404) },
} as const;

export const submitToolRoute = {
  operationId: 'submitTool',
  summary: 'Submit a tool (approved at once); X-Agent-Id marks an agent submission',
  tags: ['directory'],
  security: SECURITY.directoryUser,
  headers: agentHeader,
  body: {
    type: 'object',
    required: ['name', 'url', 'description', 'category_id'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: TOOL_LIMITS.nameMaxLength, ...notBlank },
      url: httpUrlSchema(TOOL_LIMITS.urlMaxLength),
      description: { type: 'string', minLength: 1, maxLength: TOOL_LIMITS.descriptionMaxLength, ...notBlank },
      category_id: { type: 'integer', minimum: 1, maximum: TOOL_LIMITS.categoryIdMax },
      capabilities: { type: 'array', maxItems: TOOL_LIMITS.capabilitiesMax, items: { type: 'string', minLength: 1, maxLength: TOOL_LIMITS.capabilityMaxLength, ...notBlank } },
      api_endpoint: httpUrlSchema(TOOL_LIMITS.urlMaxLength),
      auth_method: { type: 'string', enum: [...AUTH_METHODS] },
      pricing_model: { type: 'string', enum: [...PRICING_MODELS] },
    },
  },
  response: { 201: { type: 'object', required: ['success', 'tool'], properties: { success: { type: 'boolean' }, tool: fullTool } }, ...errors(400, 401, 409) },
} as const;

export const voteRoute = {
  operationId: 'toggleToolVote',
  summary: 'Toggle the caller’s vote; X-Agent-Id marks an agent vote',
  tags: ['directory'],
  security: SECURITY.directoryUser,
  headers: agentHeader,
  params: idParams,
  response: {
    200: {
      type: 'object',
      required: ['success', 'voted', 'vote_count'],
      properties: { success: { type: 'boolean' }, voted: { type: 'boolean' }, vote_count: { type: 'integer' } },
    },
    ...errors(400, 401, 404),
  },
} as const;

export const categoriesRoute = {
  operationId: 'listCategories',
  summary: 'Every category with its tool count',
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  response: {
    200: {
      type: 'object',
      required: ['success', 'categories'],
      properties: {
        success: { type: 'boolean' },
        categories: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'name', 'slug', 'tool_count'],
            properties: { id: { type: 'integer' }, name: { type: 'string' }, slug: { type: 'string' }, tool_count: { type: 'integer' } },
          },
        },
      },
    },
    ...errors(),
  },
} as const;

export const leaderboardRoute = {
  operationId: 'getLeaderboard',
  summary: 'Agent-submitted and human-submitted tools, each ranked by votes',
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  querystring: {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: TOOL_LIMITS.leaderboardMax, default: TOOL_LIMITS.leaderboardDefault } },
  },
  response: {
    200: {
      type: 'object',
      required: ['success', 'agents', 'humans'],
      properties: { success: { type: 'boolean' }, agents: { type: 'array', items: toolItem }, humans: { type: 'array', items: toolItem } },
    },
    ...errors(400),
  },
} as const;

export const statsRoute = {
  operationId: 'getDirectoryStats',
  summary: 'Platform-wide counts',
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  response: {
    200: {
      type: 'object',
      required: ['success', 'stats'],
      properties: {
        success: { type: 'boolean' },
        stats: {
          type: 'object',
          required: ['total_tools', 'total_votes', 'agent_submissions', 'agent_votes'],
          properties: { total_tools: { type: 'integer' }, total_votes: { type: 'integer' }, agent_submissions: { type: 'integer' }, agent_votes: { type: 'integer' } },
        },
      },
    },
    ...errors(),
  },
} as const;

export const magicLinkRoute = {
  operationId: 'requestMagicLink',
  summary: 'E-mail a one-time sign-in link (same answer for every address)',
  tags: ['accounts'],
  security: SECURITY.public,
  body: {
    type: 'object',
    required: ['email'],
    properties: { email: { type: 'string', minLength: 3, maxLength: ACCOUNT_LIMITS.emailMaxLength, format: 'email', description: ACCOUNT_LIMITS.emailDescription } },
  },
  response: { 200: { type: 'object', required: ['success', 'message'], properties: { success: { type: 'boolean' }, message: { type: 'string' } } }, ...errors(400) },
} as const;

export const verifyRoute = {
  operationId: 'verifyMagicLink',
  summary: 'Redeem a sign-in link for a 7-day JWT',
  tags: ['accounts'],
  security: SECURITY.public,
  body: { type: 'object', required: ['token'], properties: { token: { type: 'string', minLength: 1, maxLength: ACCOUNT_LIMITS.magicLinkTokenMaxLength } } },
  response: {
    200: {
      type: 'object',
      required: ['success', 'token', 'expires_at', 'user'],
      properties: {
        success: { type: 'boolean' },
        token: { type: 'string' },
        expires_at: dateTime,
        user: { type: 'object', required: ['id', 'email'], properties: { id: { type: 'string' }, email: { type: 'string' } } },
      },
    },
    ...errors(400, 401),
  },
} as const;
