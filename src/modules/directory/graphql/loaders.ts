import DataLoader from 'dataloader';
import type { Actor } from '../../../platform/auth/actor.js';
import { viewerOf, type Account } from '../account.service.js';
import type { ToolService } from '../tool.service.js';
import type { DirectoryContext } from './context.js';

export function createDirectoryLoaders(tools: ToolService, actor: () => Promise<Actor>): DirectoryContext['directory'] {
  const getViewer = async (): Promise<Account | undefined> => viewerOf(await actor());
  return {
    categoryById: new DataLoader(async (ids) => {
      const found = new Map((await tools.categoriesByIds(ids)).map((category) => [category.id, category]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    viewerHasVoted: new DataLoader(async (toolIds) => {
      const user = await getViewer();
      if (!user) return toolIds.map(() => false);
      const voted = await tools.votedBy(user.id, toolIds);
      return toolIds.map((id) => voted.has(id));
    }),
    viewer: getViewer,
  };
}
