import DataLoader from 'dataloader';
import type { AgentService } from '../agent.service.js';
import type { Agent } from '../entities/agent.entity.js';

/** Per-request batching for scheduling relations; built in the GraphQL context, never shared. */
export interface SchedulingLoaders {
  agentById: DataLoader<string, Agent | null>;
  childrenByParentId: DataLoader<string, Agent[]>;
}

export function createSchedulingLoaders(agents: AgentService): SchedulingLoaders {
  return {
    agentById: new DataLoader(async (ids) => {
      const found = new Map((await agents.findByIds(ids)).map((agent) => [agent.id, agent]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    childrenByParentId: new DataLoader(async (parentIds) => {
      const children = await agents.findChildrenOf(parentIds);
      return parentIds.map((parentId) => children.filter((child) => child.parent?.id === parentId));
    }),
  };
}
