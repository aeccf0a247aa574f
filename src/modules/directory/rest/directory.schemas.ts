import { httpUrlSchema, NOT_BLANK } from '../../../platform/formats.js';
import { SECURITY } from '../../../platform/http/openapi.js';
import { AUTH_METHODS, PRICING_MODELS } from '../entities/tool.entity.js';
import { MAGIC_LINK_TTL_MINUTES } from '../account.service.js';
import { ACCOUNT_LIMITS } from '../limits.js';
import { CATEGORY_SLUG, TOOL_LIMITS, TOOL_SORTS } from '../tool.service.js';

const dateTime = { type: 'string', format: 'date-time' } as const;
const notBlank = { pattern: NOT_BLANK.pattern, description: NOT_BLANK.description } as const;

export const errorBody = {
  type: 'object',
  required: ['success', 'message'],
  properties: { success: { type: 'boolean', const: false }, message: { type: 'string' }, errors: { type: 'object', additionalProperties: { type: 'string' } } },
} as const;

/** Every directory read and write spends one unit of the caller's budget (directory-budget.ts). */
const BUDGET =
  'Spends one unit of the directory budget: a signed-in user’s own (RATE_LIMIT_AUTH_PER_MIN), else the address’s (RATE_LIMIT_ANON_PER_MIN); ' +
  'spent, it is 429 with `Retry-After`. Answers carry `RateLimit-*` headers.';

const exampleTool = {
  id: 42,
  name: 'Calendar Agent Kit',
  url: 'https://example.com/calendar-agent-kit',
  description: 'Books, moves and cancels meetings through a REST API.',
  vote_count: 17,
  slug: 'calendar-agent-kit',
  category_name: 'Agents & Automation',
  category_slug: 'agents-automation',
  submission_source: 'agent',
  capabilities: ['scheduling', 'rest'],
  pricing_model: 'freemium',
  created_at: '2031-04-28T12:00:00.000Z',
} as const;
const exampleFullTool = { ...exampleTool, api_endpoint: 'https://api.example.com/v1', auth_method: 'api_key', submitted_by_agent: 'scheduler-bot' } as const;

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
  examples: [exampleTool],
} as const;

export const fullTool = {
  ...toolItem,
  required: [...toolItem.required, 'api_endpoint', 'auth_method', 'submitted_by_agent'],
  properties: {
    ...toolItem.properties,
    api_endpoint: { type: ['string', 'null'] },
    auth_method: { type: ['string', 'null'], enum: [...AUTH_METHODS, null] },
    submitted_by_agent: { type: ['string', 'null'], description: 'The X-Agent-Id sent with the submission; null for a human’s.' },
  },
  examples: [exampleFullTool],
} as const;

const agentHeader = {
  type: 'object',
  properties: {
    'x-agent-id': {
      type: 'string',
      minLength: 1,
      maxLength: TOOL_LIMITS.agentIdMaxLength,
      description: 'The agent acting for the signed-in user: marks the submission or vote as an agent’s for the leaderboard and stats. Recorded as sent.',
      examples: ['scheduler-bot'],
    },
  },
} as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, description: 'The tool’s numeric id (a decimal integer).', examples: ['42'] } },
} as const;

export const listToolsRoute = {
  operationId: 'listTools',
  summary: 'The catalogue of approved tools',
  description:
    'One page of approved tools, optionally of one category: `votes` (most first), `newest`, or `trending` (votes of the last ' +
    `${TOOL_LIMITS.trendingDays} days, each day weighing half as much as ${TOOL_LIMITS.trendingHalfLifeDays} days later). No credential needed. ${BUDGET}`,
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  querystring: {
    type: 'object',
    properties: {
      category: {
        type: 'string',
        minLength: 1,
        maxLength: CATEGORY_SLUG.maxLength,
        pattern: CATEGORY_SLUG.pattern,
        description: CATEGORY_SLUG.description,
        examples: ['agents-automation'],
      },
      sort: { type: 'string', enum: [...TOOL_SORTS], default: 'votes', description: 'The order: `votes`, `newest` or `trending`.', examples: ['trending'] },
      page: { type: 'integer', minimum: 1, maximum: TOOL_LIMITS.pageMax, default: 1, description: 'Which page, from 1; past `totalPages` the page is empty.' },
      limit: { type: 'integer', minimum: 1, maximum: TOOL_LIMITS.pageSizeMax, default: TOOL_LIMITS.pageSizeDefault, description: 'Tools per page.' },
    },
  },
  response: {
    200: {
      description: 'A page of tools',
      type: 'object',
      required: ['success', 'tools', 'page', 'totalPages', 'totalTools'],
      properties: {
        success: { type: 'boolean' },
        tools: { type: 'array', items: toolItem },
        page: { type: 'integer' },
        totalPages: { type: 'integer' },
        totalTools: { type: 'integer' },
      },
      examples: [{ success: true, tools: [exampleTool], page: 1, totalPages: 1, totalTools: 1 }],
    },
    ...errors(400),
  },
} as const;

export const getToolRoute = {
  operationId: 'getTool',
  summary: 'One tool with all its metadata',
  description: `The tool with its API endpoint, auth method and submitting agent; an id that names no tool is 404. No credential needed. ${BUDGET}`,
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  params: idParams,
  response: {
    200: { description: 'The tool', type: 'object', required: ['success', 'tool'], properties: { success: { type: 'boolean' }, tool: fullTool } },
    ...errors(404),
  },
} as const;

export const submitToolRoute = {
  operationId: 'submitTool',
  summary: 'Submit a tool (approved at once); X-Agent-Id marks an agent submission',
  description:
    'Lists the tool at once (approved) in its category, with a slug made from its name. A URL already submitted is 409 `conflict`, ' +
    'compared with scheme and host lower-cased and the default port and a trailing slash removed. An unknown `category_id` is a 400 naming it ' +
    `(GET /api/categories lists them). ${BUDGET}`,
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
    examples: [
      {
        name: exampleFullTool.name,
        url: exampleFullTool.url,
        description: exampleFullTool.description,
        category_id: 8,
        capabilities: exampleFullTool.capabilities,
        api_endpoint: exampleFullTool.api_endpoint,
        auth_method: exampleFullTool.auth_method,
        pricing_model: exampleFullTool.pricing_model,
      },
    ],
  },
  response: {
    201: { description: 'The tool, listed', type: 'object', required: ['success', 'tool'], properties: { success: { type: 'boolean' }, tool: fullTool } },
    ...errors(400, 401, 409),
  },
} as const;

export const voteRoute = {
  operationId: 'toggleToolVote',
  summary: 'Toggle the caller’s vote; X-Agent-Id marks an agent vote',
  description:
    'Adds the signed-in user’s vote, or removes it when there is one: two calls in a row leave no vote. One user’s toggles on one tool run ' +
    `one at a time, and \`vote_count\` always equals the votes held. An id that names no tool is 404. ${BUDGET}`,
  tags: ['directory'],
  security: SECURITY.directoryUser,
  headers: agentHeader,
  params: idParams,
  response: {
    200: {
      description: 'Whether the caller’s vote is now counted, and the new count',
      examples: [{ success: true, voted: true, vote_count: 18 }],
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
  description: `Every category in display order, with its id (the \`category_id\` of a submission), slug and number of approved tools. No credential needed. ${BUDGET}`,
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  response: {
    200: {
      description: 'The categories',
      examples: [{ success: true, categories: [{ id: 8, name: 'Agents & Automation', slug: 'agents-automation', tool_count: 12 }] }],
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
  description: `Two lists: tools submitted with X-Agent-Id and tools submitted without, each by vote count (most first). No credential needed. ${BUDGET}`,
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  querystring: {
    type: 'object',
    properties: {
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: TOOL_LIMITS.leaderboardMax,
        default: TOOL_LIMITS.leaderboardDefault,
        description: 'Tools in each of the two lists.',
        examples: [10],
      },
    },
  },
  response: {
    200: {
      description: 'The two rankings',
      examples: [{ success: true, agents: [exampleTool], humans: [] }],
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
  description: `Tools, votes, and how many of each came from agents (X-Agent-Id), counted when asked. No credential needed. ${BUDGET}`,
  tags: ['directory'],
  security: SECURITY.directoryUserOrNone,
  response: {
    200: {
      description: 'The counts',
      examples: [{ success: true, stats: { total_tools: 57, total_votes: 311, agent_submissions: 21, agent_votes: 94 } }],
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
  description:
    `Sends a link to /browse?token=… that signs in once within ${MAGIC_LINK_TTL_MINUTES} minutes (POST /api/auth/verify redeems its token); ` +
    'the account is created at the first sign-in. The answer is the same whether or not the address has an account. ' +
    'Without SMTP_URL the link is written to the server’s log instead. At most 10 requests a minute per client address and per e-mail ' +
    'address (429 with `Retry-After`).',
  tags: ['accounts'],
  security: SECURITY.public,
  body: {
    type: 'object',
    required: ['email'],
    properties: { email: { type: 'string', minLength: 3, maxLength: ACCOUNT_LIMITS.emailMaxLength, format: 'email', description: ACCOUNT_LIMITS.emailDescription } },
    examples: [{ email: 'ada@example.com' }],
  },
  response: {
    200: {
      description: 'The link is on its way if the address can receive e-mail',
      type: 'object',
      required: ['success', 'message'],
      properties: { success: { type: 'boolean' }, message: { type: 'string' } },
      examples: [{ success: true, message: `If the address can receive e-mail, a sign-in link is on its way. It expires in ${MAGIC_LINK_TTL_MINUTES} minutes.` }],
    },
    ...errors(400),
  },
} as const;

export const verifyRoute = {
  operationId: 'verifyMagicLink',
  summary: 'Redeem a sign-in link for a 7-day JWT',
  description:
    'Redeems the `token` of a sign-in link once (a second redemption, an unknown or an expired token is 401) and answers a JWT valid 7 days: ' +
    'send it as `Authorization: Bearer …` to submit and vote. At most 10 requests a minute per client address (429 with `Retry-After`).',
  tags: ['accounts'],
  security: SECURITY.public,
  body: {
    type: 'object',
    required: ['token'],
    properties: {
      token: { type: 'string', minLength: 1, maxLength: ACCOUNT_LIMITS.magicLinkTokenMaxLength, description: 'The `token` query parameter of the e-mailed link.' },
    },
    examples: [{ token: 'Xk3v9QpZr2LmT7wYc5NbHd8FsJ1aGe4UoVi6KxRn0Ct' }],
  },
  response: {
    200: {
      description: 'Signed in',
      examples: [
        {
          success: true,
          token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI4YjFmIn0.c2lnbmF0dXJl',
          expires_at: '2031-05-08T09:00:00.000Z',
          user: { id: '8b1f0c2e-4d6a-4e3b-9f7c-2a5d8e1b6c40', email: 'ada@example.com' },
        },
      ],
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
