import { Arg, Ctx, Directive, FieldResolver, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { DirectoryBudget } from '../directory-budget.js';
import type { AccountService } from '../account.service.js';
import { TOOL_LIMITS, type ToolService } from '../tool.service.js';
import type { DirectoryContext } from './context.js';
import {
  CategoryNode,
  DirectoryUserNode,
  Leaderboard,
  Session,
  StatsNode,
  SubmitToolInput,
  ToolNode,
  ToolPageNode,
  ToolSortOrder,
  VoteResult,
} from './directory.types.js';
import { listSize } from '../../../platform/graphql/directives.js';

/** Categories come from migrations (10 so far): the cost estimate allows for twice as many. */
const CATEGORIES_ASSUMED = 20;

@Resolver(() => ToolNode)
export class DirectoryResolver {
  constructor(
    private readonly toolService: ToolService,
    private readonly accounts: AccountService,
    private readonly budget: DirectoryBudget,
  ) {}

  @Directive(listSize({ slicingArguments: ['limit'], sizedFields: ['tools'], requireOneSlicingArgument: false }))
  @Query(() => ToolPageNode, { description: 'The catalogue, filtered by category slug, sorted and paged.' })
  async tools(
    @Ctx() ctx: DirectoryContext,
    @Arg('category', () => String, { nullable: true }) category?: string | null,
    @Arg('sort', () => ToolSortOrder, { defaultValue: ToolSortOrder.votes }) sort = ToolSortOrder.votes,
    @Arg('page', () => Int, { defaultValue: 1, description: `1 to ${TOOL_LIMITS.pageMax}.` }) page = 1,
    @Arg('limit', () => Int, { defaultValue: TOOL_LIMITS.pageSizeDefault, description: `Tools per page, 1 to ${TOOL_LIMITS.pageSizeMax}.` }) limit = TOOL_LIMITS.pageSizeDefault as number,
  ): Promise<ToolPageNode> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    const result = await this.toolService.list({ category: category ?? undefined, sort, page, limit });
    return { ...result, tools: result.tools.map(ToolNode.from) };
  }

  @Query(() => ToolNode)
  async tool(@Arg('id', () => Int) id: number, @Ctx() ctx: DirectoryContext): Promise<ToolNode> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    return ToolNode.from(await this.toolService.get(id));
  }

  @Directive(listSize({ assumedSize: CATEGORIES_ASSUMED }))
  @Query(() => [CategoryNode])
  async categories(@Ctx() ctx: DirectoryContext): Promise<CategoryNode[]> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    return this.toolService.categories();
  }

  @Directive(listSize({ slicingArguments: ['limit'], sizedFields: ['agents', 'humans'], requireOneSlicingArgument: false }))
  @Query(() => Leaderboard)
  async leaderboard(
    @Arg('limit', () => Int, { defaultValue: TOOL_LIMITS.leaderboardDefault }) limit: number,
    @Ctx() ctx: DirectoryContext,
  ): Promise<Leaderboard> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    const board = await this.toolService.leaderboard(limit);
    return { agents: board.agents.map(ToolNode.from), humans: board.humans.map(ToolNode.from) };
  }

  @Query(() => StatsNode)
  async stats(@Ctx() ctx: DirectoryContext): Promise<StatsNode> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    return this.toolService.stats();
  }

  @Query(() => DirectoryUserNode, { nullable: true, description: 'The signed-in directory user; null when signed out or the token expired.' })
  async viewer(@Ctx() ctx: DirectoryContext): Promise<DirectoryUserNode | null> {
    const user = await ctx.directory.viewer();
    return user ? { id: user.id, email: user.email } : null;
  }

  @Mutation(() => ToolNode, { description: 'Submits a tool (approved at once). Send X-Agent-Id to mark an agent submission.' })
  async submitTool(@Arg('input') input: SubmitToolInput, @Ctx() ctx: DirectoryContext): Promise<ToolNode> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    return ToolNode.from(await this.toolService.submit(await ctx.actor(), input, ctx.header('x-agent-id')));
  }

  @Mutation(() => VoteResult, { description: "Toggles the viewer's vote on a tool." })
  async toggleVote(@Arg('toolId', () => Int) toolId: number, @Ctx() ctx: DirectoryContext): Promise<VoteResult> {
    await this.budget.spend(await ctx.actor(), ctx.ip);
    const result = await this.toolService.toggleVote(await ctx.actor(), toolId, ctx.header('x-agent-id'));
    const tool = ToolNode.from(await this.toolService.get(toolId));
    ctx.directory.viewerHasVoted.prime(toolId, result.voted);
    return { ...result, tool };
  }

  @Mutation(() => Boolean, { description: 'E-mails a one-time sign-in link; true whatever the address.' })
  async requestMagicLink(@Arg('email') email: string, @Ctx() ctx: DirectoryContext): Promise<boolean> {
    await this.accounts.requestMagicLink(ctx.ip, email);
    return true;
  }

  @Mutation(() => Session, { description: 'Redeems a sign-in link for a 7-day JWT.' })
  async redeemMagicLink(@Arg('token') token: string, @Ctx() ctx: DirectoryContext): Promise<Session> {
    return (await this.accounts.redeem(ctx.ip, token)).signedIn;
  }

  @FieldResolver(() => CategoryNode)
  async category(@Root() tool: ToolNode, @Ctx() ctx: DirectoryContext): Promise<CategoryNode> {
    const category = await ctx.directory.categoryById.load(tool.categoryId);
    if (!category) throw new Error(`tool ${tool.id} has no category ${tool.categoryId}`);
    return { id: category.id, name: category.name, slug: category.slug };
  }

  @FieldResolver(() => Boolean)
  async viewerHasVoted(@Root() tool: ToolNode, @Ctx() ctx: DirectoryContext): Promise<boolean> {
    return ctx.directory.viewerHasVoted.load(tool.id);
  }
}
