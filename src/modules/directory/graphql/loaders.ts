import DataLoader from 'dataloader';
import type { PresentedCredential } from '../../../platform/auth/credentials.js';
import type { AccountService } from '../account.service.js';
import type { User } from '../entities/user.entity.js';
import type { ToolService } from '../tool.service.js';
import type { DirectoryContext } from './context.js';

export function createDirectoryLoaders(tools: ToolService, accounts: AccountService, credential: PresentedCredential): DirectoryContext['directory'] {
  let viewer: Promise<User | undefined> | undefined;
  const getViewer = () => (viewer ??= accounts.viewer(credential));
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
