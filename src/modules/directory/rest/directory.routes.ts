import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { writeRateLimitHeaders } from '../../../platform/http/rate-limit-headers.js';
import type { DirectoryBudget } from '../directory-budget.js';
import { MAGIC_LINK_TTL_MINUTES, type AccountService } from '../account.service.js';
import type { ToolService, ToolSort } from '../tool.service.js';
import { presentCategory, presentStats, presentTool, presentToolItem } from './tool.presenter.js';
import {
  categoriesRoute,
  getToolRoute,
  leaderboardRoute,
  listToolsRoute,
  magicLinkRoute,
  statsRoute,
  submitToolRoute,
  verifyRoute,
  voteRoute,
} from './directory.schemas.js';


interface SubmitToolBody {
  name: string;
  url: string;
  description: string;
  category_id: number;
  capabilities?: string[];
  api_endpoint?: string;
  auth_method?: string;
  pricing_model?: string;
}


/** Seed 001 routes. Every answer carries `success`; errors are `{success: false, message}`. */
export function registerDirectoryRoutes(
  app: FastifyInstance,
  deps: { tools: ToolService; accounts: AccountService; budget: DirectoryBudget },
): void {
  const { tools, accounts, budget } = deps;
  const directoryBudget = async (request: FastifyRequest, reply: FastifyReply) => writeRateLimitHeaders(reply, await budget.spend(await request.actor(), request.ip));
  const config = { errorStyle: 'directory' as const };
  const agentId = (request: FastifyRequest) => {
    const value = request.headers['x-agent-id'];
    return typeof value === 'string' ? value : undefined;
  };

  app.register(async (scope) => {
    scope.addHook('onRequest', directoryBudget);

    scope.get<{ Querystring: { category?: string; sort: ToolSort; page: number; limit: number } }>(
      '/api/tools',
      { schema: listToolsRoute, config },
      async (request) => {
        const page = await tools.list(request.query);
        return { success: true, ...page, tools: page.tools.map(presentToolItem) };
      },
    );

    scope.get<{ Params: { id: string } }>('/api/tools/:id', { schema: getToolRoute, config }, async (request) => ({
      success: true,
      tool: presentTool(await tools.get(request.params.id)),
    }));

    scope.post<{ Body: SubmitToolBody }>('/api/tools', { schema: submitToolRoute, config }, async (request, reply) => {
      const body = request.body;
      const tool = await tools.submit(
        await request.actor(),
        {
          name: body.name,
          url: body.url,
          description: body.description,
          categoryId: body.category_id,
          capabilities: body.capabilities,
          apiEndpoint: body.api_endpoint,
          authMethod: body.auth_method,
          pricingModel: body.pricing_model,
        },
        agentId(request),
      );
      return reply.code(201).send({ success: true, tool: presentTool(tool) });
    });

    scope.post<{ Params: { id: string } }>('/api/tools/:id/vote', { schema: voteRoute, config }, async (request) => {
      const result = await tools.toggleVote(await request.actor(), request.params.id, agentId(request));
      return { success: true, voted: result.voted, vote_count: result.voteCount };
    });

    scope.get('/api/categories', { schema: categoriesRoute, config }, async () => ({
      success: true,
      categories: (await tools.categories()).map(presentCategory),
    }));

    scope.get<{ Querystring: { limit: number } }>('/api/leaderboard', { schema: leaderboardRoute, config }, async (request) => {
      const board = await tools.leaderboard(request.query.limit);
      return { success: true, agents: board.agents.map(presentToolItem), humans: board.humans.map(presentToolItem) };
    });

    scope.get('/api/stats', { schema: statsRoute, config }, async () => ({ success: true, stats: presentStats(await tools.stats()) }));
  });

  // Sign-in has its own budgets (the account service spends them) and does not spend the directory's.
  app.register(async (scope) => {
    scope.post<{ Body: { email: string } }>('/api/auth/magic-link', { schema: magicLinkRoute, config }, async (request, reply) => {
      writeRateLimitHeaders(reply, await accounts.requestMagicLink(request.ip, request.body.email));
      return { success: true, message: `If the address can receive e-mail, a sign-in link is on its way. It expires in ${MAGIC_LINK_TTL_MINUTES} minutes.` };
    });

    scope.post<{ Body: { token: string } }>('/api/auth/verify', { schema: verifyRoute, config }, async (request, reply) => {
      const { signedIn: session, budget: signInBudget } = await accounts.redeem(request.ip, request.body.token);
      writeRateLimitHeaders(reply, signInBudget);
      return { success: true, token: session.token, expires_at: session.expiresAt.toISOString(), user: session.user };
    });
  });
}
