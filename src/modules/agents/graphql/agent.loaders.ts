import DataLoader from 'dataloader';
import type { Actor } from '../../../platform/auth/actor.js';
import type { PlatformContext } from '../../../platform/graphql/server.js';
import { AppError } from '../../../platform/errors.js';
import { AGENT_LIMITS, type AgentService } from '../agent.service.js';
import type { AgentRecord } from '../sql/agent.sql.js';

/** Which page of an agent's children: `first` of them after the child `after` (oldest first). */
export interface ChildrenPageKey {
  parentId: string;
  first: number;
  after: string | null;
}

/** Per-operation batching of agents; built in the GraphQL context, never shared. */
export interface AgentLoaders {
  agentById: DataLoader<string, AgentRecord | null>;
  childrenPage: DataLoader<ChildrenPageKey, AgentRecord[], string>;
  /** Counts child agents into this operation's answer; `limit_exceeded` past `AGENT_LIMITS.childrenPerOperation`. */
  countChildren(count: number): void;
  /** An agent that must exist (a foreign key holds it). */
  loadAgent(id: string): Promise<AgentRecord>;
}

const childrenPageId = (key: ChildrenPageKey) => `${key.parentId}|${key.first}|${key.after ?? ''}`;

/**
 * Built per operation, so loaders also work where no request scope is active (subscriptions). The
 * caller is known already (its credential was resolved): asking for it reads nothing.
 */
export function createAgentLoaders(agents: AgentService, caller: () => Promise<Actor>): AgentLoaders {
  let childrenAnswered = 0;
  const agentById = new DataLoader<string, AgentRecord | null>(async (ids) => {
    const actor = await caller();
    const known = actor.kind === 'agent' ? actor.agent : undefined;
    const unknown = ids.filter((id) => id !== known?.id);
    const found = await agents.byIds(unknown);
    if (known) found.set(known.id, known);
    return ids.map((id) => found.get(id) ?? null);
  });
  return {
    agentById,
    childrenPage: new DataLoader<ChildrenPageKey, AgentRecord[], string>(
      async (keys) => {
        // Parents of one level usually ask for the same page: one statement per (first, after).
        const pages = new Map<string, AgentRecord[]>();
        const groups = Map.groupBy(keys, (key) => `${key.first}|${key.after ?? ''}`);
        for (const group of groups.values()) {
          const { first, after } = group[0]!;
          const children = await agents.childrenPages(group.map((key) => key.parentId), after, first);
          for (const key of group) pages.set(childrenPageId(key), children.get(key.parentId) ?? []);
        }
        return keys.map((key) => pages.get(childrenPageId(key)) ?? []);
      },
      { cacheKeyFn: childrenPageId },
    ),
    countChildren(count) {
      childrenAnswered += count;
      if (childrenAnswered > AGENT_LIMITS.childrenPerOperation) {
        throw new AppError(
          'limit_exceeded',
          `one operation answers at most ${AGENT_LIMITS.childrenPerOperation} child agents in all; ask for smaller or fewer children pages`,
        );
      }
    },
    async loadAgent(id) {
      const agent = await agentById.load(id);
      if (!agent) throw new Error(`agent ${id} is referenced but does not exist`);
      return agent;
    },
  };
}

/** The GraphQL context of resolvers that load agents (any module's). */
export interface AgentsContext extends PlatformContext {
  readonly agents: AgentLoaders;
}
