import type { CategoryView, DirectoryStats, ToolView } from '../tool.service.js';

/** Seed 001 `Tool` (list item). */
export function presentToolItem(tool: ToolView) {
  return {
    id: tool.id,
    name: tool.name,
    url: tool.url,
    description: tool.description,
    vote_count: tool.voteCount,
    slug: tool.slug,
    category_name: tool.categoryName,
    category_slug: tool.categorySlug,
    submission_source: tool.submissionSource,
    capabilities: tool.capabilities,
    pricing_model: tool.pricingModel,
    created_at: tool.createdAt.toISOString(),
  };
}

/** The full tool: the list item plus its API metadata and the submitting agent. */
export function presentTool(tool: ToolView) {
  return {
    ...presentToolItem(tool),
    api_endpoint: tool.apiEndpoint,
    auth_method: tool.authMethod,
    submitted_by_agent: tool.submittedByAgent,
  };
}

export function presentCategory(category: CategoryView) {
  return { id: category.id, name: category.name, slug: category.slug, tool_count: category.toolCount };
}

export function presentStats(stats: DirectoryStats) {
  return {
    total_tools: stats.totalTools,
    total_votes: stats.totalVotes,
    agent_submissions: stats.agentSubmissions,
    agent_votes: stats.agentVotes,
  };
}
