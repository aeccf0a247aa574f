import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../platform/auth/actor.js';
import { ormReplicaRead } from '../../platform/db/replica-routing.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { CATEGORIES, DIRECTORY_STATS, TOGGLE_VOTE, TRENDING_ORDER } from './sql/directory.sql.js';
import { violatedConstraint } from '../../platform/db/pg-errors.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import { Category } from './entities/category.entity.js';
import { Tool } from './entities/tool.entity.js';
import { checkToolSubmission, SUBMISSION_LIMITS, type AuthMethod, type PricingModel, type ToolSubmission } from './tool-rules.js';
import { accountOf } from './account.service.js';
import { Vote } from './entities/vote.entity.js';
import { normalizeToolUrl, slugify } from './tool-url.js';
import { echo } from '../../platform/echo.js';
import { followsPattern } from '../../platform/formats.js';

export const TOOL_LIMITS = {
  ...SUBMISSION_LIMITS,
  pageSizeDefault: 20,
  pageSizeMax: 100,
  /** The last page one may ask for (REST and GraphQL): pages of 100 reach the first million tools, and the offset stays far inside SQL's integers. */
  pageMax: 10_000,
  leaderboardDefault: 20,
  leaderboardMax: 100,
  agentIdMaxLength: 128,
  /** Trending counts votes of this many days, each day weighing half as much as two days later. */
  trendingDays: 7,
  trendingHalfLifeDays: 2,
  /** The trending order is recomputed at most this often per category (and at every new UTC day). */
  trendingCacheMs: 10_000,
} as const;

const CATEGORY_SLUG_MAX_LENGTH = 100;
/** What a category slug can look like (the column holds up to 100 characters); anything else names none. */
export const CATEGORY_SLUG = {
  pattern: `^[a-z0-9-]{1,${CATEGORY_SLUG_MAX_LENGTH}}$`,
  maxLength: CATEGORY_SLUG_MAX_LENGTH,
  description: 'a category slug (lower-case letters, digits and hyphens)',
} as const;

export const TOOL_SORTS = ['votes', 'newest', 'trending'] as const;
export type ToolSort = (typeof TOOL_SORTS)[number];

/** A tool with everything any adapter shows (the full seed-001 tool). */
export interface ToolView {
  id: number;
  name: string;
  url: string;
  description: string;
  voteCount: number;
  slug: string;
  categoryId: number;
  categoryName: string;
  categorySlug: string;
  submissionSource: 'human' | 'agent';
  capabilities: string[];
  pricingModel: PricingModel | null;
  createdAt: Date;
  apiEndpoint: string | null;
  authMethod: AuthMethod | null;
  submittedByAgent: string | null;
}

export interface ToolPage {
  tools: ToolView[];
  page: number;
  totalPages: number;
  totalTools: number;
}

export type SubmitToolInput = ToolSubmission;

export interface CategoryView {
  id: number;
  name: string;
  slug: string;
  toolCount: number;
}

export interface DirectoryStats {
  totalTools: number;
  totalVotes: number;
  agentSubmissions: number;
  agentVotes: number;
}

export function toToolView(tool: Tool): ToolView {
  return {
    id: tool.id,
    name: tool.name,
    url: tool.url,
    description: tool.description,
    voteCount: tool.voteCount,
    slug: tool.slug,
    categoryId: tool.category.id,
    categoryName: tool.category.name,
    categorySlug: tool.category.slug,
    submissionSource: tool.submissionSource,
    capabilities: tool.capabilities,
    pricingModel: tool.pricingModel,
    createdAt: tool.createdAt,
    apiEndpoint: tool.apiEndpoint,
    authMethod: tool.authMethod,
    submittedByAgent: tool.submittedByAgent,
  };
}

function checkPage(page: number, limit: number, max: number): void {
  const fields: FieldErrors = {};
  if (!Number.isInteger(page) || page < 1) fields.page = 'must be a positive integer';
  else if (page > TOOL_LIMITS.pageMax) fields.page = `must be at most ${TOOL_LIMITS.pageMax}`;
  if (!Number.isInteger(limit) || limit < 1) fields.limit = 'must be a positive integer';
  else if (limit > max) fields.limit = `must be at most ${max}`;
  if (Object.keys(fields).length) throw AppError.validation(fields);
}

/**
 * A tool id, as GraphQL's Int or as a path spells it: a path's decimal digits of a safe integer
 * (`Number()` would take `1.0`, `0x10` and `1e3`, and round 9007199254740993 to another id).
 * Undefined when it names no tool.
 */
function toolIdOf(id: number | string): number | undefined {
  const value = typeof id === 'number' ? id : /^\d{1,15}$/.test(id) ? Number(id) : Number.NaN;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function checkAgentId(agentId: string | undefined): void {
  if (agentId !== undefined && (agentId.length < 1 || agentId.length > TOOL_LIMITS.agentIdMaxLength)) {
    throw AppError.validation({ 'X-Agent-Id': `must be 1 to ${TOOL_LIMITS.agentIdMaxLength} characters` });
  }
}

/** The catalogue: listing, submissions, votes, categories, leaderboard and stats. */
export class ToolService {
  /** Trending order per day and category: the ids, computed once and paged from memory. */
  private readonly trendingOrders = new Map<string, { computedAt: number; ids: Promise<number[]> }>();

  constructor(
    private readonly em: EntityManager,
    private readonly statements: Statements,
    private readonly clock: Clock,
  ) {}

  /** Directory reads (list, get, categories, leaderboard, stats) may be answered by a replica past the caller's last write. */
  async list(query: { category?: string | undefined; sort: ToolSort; page: number; limit: number }): Promise<ToolPage> {
    checkPage(query.page, query.limit, TOOL_LIMITS.pageSizeMax);
    return ormReplicaRead(() => this.listPage(query));
  }

  private async listPage(query: { category?: string | undefined; sort: ToolSort; page: number; limit: number }): Promise<ToolPage> {
    let categoryId: number | undefined;
    if (query.category !== undefined) {
      const category = followsPattern(query.category, CATEGORY_SLUG) ? await this.em.findOne(Category, { slug: query.category }) : null;
      if (!category) throw AppError.validation({ category: `${echo(query.category)} is not a category slug` });
      categoryId = category.id;
    }
    const where = categoryId === undefined ? {} : { category: categoryId };
    const offset = (query.page - 1) * query.limit;
    const totalTools = await this.em.count(Tool, where);
    let tools: Tool[];
    if (query.sort === 'trending') {
      const ids = await this.trendingIds(categoryId, query.limit, offset);
      const byId = new Map((await this.em.find(Tool, { id: { $in: ids } }, { populate: ['category'] })).map((tool) => [tool.id, tool]));
      tools = ids.map((id) => byId.get(id)).filter((tool): tool is Tool => tool !== undefined);
    } else {
      tools = await this.em.find(Tool, where, {
        populate: ['category'],
        orderBy: query.sort === 'newest' ? { createdAt: 'desc', id: 'desc' } : { voteCount: 'desc', id: 'desc' },
        limit: query.limit,
        offset,
      });
    }
    return { tools: tools.map(toToolView), page: query.page, totalPages: Math.ceil(totalTools / query.limit), totalTools };
  }

  async get(id: number | string): Promise<ToolView> {
    const toolId = toolIdOf(id);
    const tool = toolId === undefined ? null : await ormReplicaRead(() => this.em.findOne(Tool, toolId, { populate: ['category'] }));
    if (!tool) throw new AppError('not_found', `no tool ${echo(id)}`);
    return toToolView(tool);
  }

  async submit(actor: Actor, input: SubmitToolInput, agentId?: string): Promise<ToolView> {
    const user = accountOf(actor);
    checkAgentId(agentId);
    const fields = checkToolSubmission(input);
    const normalized = normalizeToolUrl(input.url);
    const category = fields.category_id ? null : await this.em.findOne(Category, input.categoryId);
    if (!fields.category_id && !category) fields.category_id = 'is not an existing category id';
    if (Object.keys(fields).length || !category) throw AppError.validation(fields);

    const base = slugify(input.name);
    for (let attempt = 0; ; attempt++) {
      const fork = this.em.fork();
      const tool = fork.create(Tool, {
        name: input.name,
        slug: attempt === 0 ? base : `${base}-${attempt + 1}`,
        url: input.url.trim(),
        urlNormalized: normalized!,
        description: input.description,
        category: category.id,
        capabilities: [...(input.capabilities ?? [])],
        apiEndpoint: input.apiEndpoint ?? null,
        authMethod: (input.authMethod as AuthMethod | null | undefined) ?? null,
        pricingModel: (input.pricingModel as PricingModel | null | undefined) ?? null,
        status: 'approved',
        submissionSource: agentId ? 'agent' : 'human',
        submittedByAgent: agentId ?? null,
        submittedByUser: user.id,
        voteCount: 0,
        createdAt: this.clock.now(),
      });
      try {
        await fork.flush();
        return toToolView(Object.assign(tool, { category }));
      } catch (error) {
        const constraint = violatedConstraint(error);
        // Two tools may share a name; their slugs may not. Try the next suffix.
        if (constraint === 'tools_slug_key' && attempt < 50) continue;
        throw error;
      }
    }
  }

  /**
   * Toggles the caller's vote. One user's toggles on one tool run one at a time (an advisory lock on
   * the pair), and `vote_count` is maintained by a trigger on `votes`, so it always equals the rows.
   */
  async toggleVote(actor: Actor, id: number | string, agentId?: string): Promise<{ voted: boolean; voteCount: number }> {
    const user = accountOf(actor);
    checkAgentId(agentId);
    const toolId = toolIdOf(id);
    const row = toolId === undefined ? undefined : await this.statements.one(TOGGLE_VOTE, [user.id, toolId, agentId ?? null, this.clock.now()]);
    if (!row || 'missing' in row.outcome) throw new AppError('not_found', `no tool ${echo(id)}`);
    return { voted: row.outcome.voted, voteCount: Number(row.outcome.voteCount) };
  }

  async categories(): Promise<CategoryView[]> {
    const rows = await this.statements.rows(CATEGORIES, []);
    return rows.map((row) => ({ id: row.id, name: row.name, slug: row.slug, toolCount: Number(row.tool_count) }));
  }

  async categoriesByIds(ids: readonly number[]): Promise<Category[]> {
    return this.em.find(Category, { id: { $in: [...ids] } });
  }

  async leaderboard(limit: number): Promise<{ agents: ToolView[]; humans: ToolView[] }> {
    if (!Number.isInteger(limit) || limit < 1 || limit > TOOL_LIMITS.leaderboardMax) {
      throw AppError.validation({ limit: `must be an integer from 1 to ${TOOL_LIMITS.leaderboardMax}` });
    }
    const top = (source: 'agent' | 'human') =>
      this.em.find(Tool, { submissionSource: source }, { populate: ['category'], orderBy: { voteCount: 'desc', id: 'desc' }, limit });
    const [agents, humans] = await ormReplicaRead(() => Promise.all([top('agent'), top('human')]));
    return { agents: agents.map(toToolView), humans: humans.map(toToolView) };
  }

  async stats(): Promise<DirectoryStats> {
    const row = await this.statements.one(DIRECTORY_STATS, []);
    return {
      totalTools: Number(row?.total_tools ?? 0),
      totalVotes: Number(row?.total_votes ?? 0),
      agentSubmissions: Number(row?.agent_submissions ?? 0),
      agentVotes: Number(row?.agent_votes ?? 0),
    };
  }

  /** Of `toolIds`, those the user has voted for (batched for `viewerHasVoted`). */
  async votedBy(userId: string, toolIds: readonly number[]): Promise<Set<number>> {
    const votes = await this.em.find(Vote, { user: userId, tool: { $in: [...toolIds] } }, { fields: ['tool'] });
    return new Set(votes.map((vote) => vote.tool.id));
  }

  /**
   * Trending: votes of the last seven UTC days from the per-day counters (an index range, never the
   * vote rows), each day weighing half as much as two days later; ties by total votes, then newest.
   * The order is computed once per category every few seconds and shared by all pages and requests
   * (concurrent requests wait for the same computation).
   */
  private async trendingIds(categoryId: number | undefined, limit: number, offset: number): Promise<number[]> {
    const today = this.clock.now().toISOString().slice(0, 10);
    const key = `${today}:${categoryId ?? 'all'}`;
    const now = Date.now();
    let cached = this.trendingOrders.get(key);
    if (!cached || now - cached.computedAt > TOOL_LIMITS.trendingCacheMs) {
      cached = { computedAt: now, ids: this.computeTrendingOrder(today, categoryId) };
      this.trendingOrders.set(key, cached);
      cached.ids.catch(() => this.trendingOrders.delete(key));
    }
    return (await cached.ids).slice(offset, offset + limit);
  }

  private async computeTrendingOrder(today: string, categoryId: number | undefined): Promise<number[]> {
    const decayPerDay = Math.LN2 / TOOL_LIMITS.trendingHalfLifeDays;
    const rows = await this.statements.rows(TRENDING_ORDER, [today, decayPerDay, TOOL_LIMITS.trendingDays, categoryId ?? null]);
    return rows.map((row) => Number(row.id));
  }
}
