import type DataLoader from 'dataloader';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { Category } from '../entities/category.entity.js';
import type { Account } from '../account.service.js';

export interface DirectoryContext extends PlatformContext {
  readonly directory: {
    categoryById: DataLoader<number, Category | null>;
    /** Whether the viewer voted for a tool; false for everyone when signed out. */
    viewerHasVoted: DataLoader<number, boolean>;
    /** The signed-in user, or undefined (a bad token on a read is simply anonymous). */
    viewer(): Promise<Account | undefined>;
  };
}
