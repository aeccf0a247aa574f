import { tool, type ToolDefinition } from '../../../platform/mcp/tool.js';
import type { TokenAnalyticsService } from '../token-analytics.service.js';
import type { TokenReadBudget } from '../token-read-budget.js';
import { presentAnalytics, presentSafety } from '../token.view.js';

const mint = { type: 'string', description: 'base58 token mint, 32 to 44 characters' } as const;

/** The MCP tools of token analytics: the same data as `GET /v1/tokens/:mint/*`, on the same budget. */
export function tokenTools(tokens: TokenAnalyticsService, budget: TokenReadBudget): ToolDefinition<unknown>[] {
  return [
    tool<{ mint: string }>({
      name: 'get_token_analytics',
      description: 'Price, liquidity, 24 h volume, trades, price change, FDV and market cap of a Solana token mint, from its DEX pairs.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['mint'], properties: { mint } },
      annotations: { readOnlyHint: true, openWorldHint: true },
      run: async (args, { address }) => {
        await budget.spend(address);
        return presentAnalytics(await tokens.analytics(args.mint));
      },
    }),
    tool<{ mint: string }>({
      name: 'get_token_safety',
      description: 'A 0–100 safety score for a token mint with named, weighted checks and the inputs that were missing.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['mint'], properties: { mint } },
      annotations: { readOnlyHint: true, openWorldHint: true },
      run: async (args, { address }) => {
        await budget.spend(address);
        return presentSafety(await tokens.safety(args.mint));
      },
    }),
  ];
}
