import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { Agent } from '../entities/agent.entity.js';

/** Per-operation batching for scheduling relations; built in the GraphQL context, never shared. */
export interface SchedulingLoaders {
  agentById: DataLoader<string, Agent | null>;
  childrenByParentId: DataLoader<string, Agent[]>;
  /** An agent that must exist (a foreign key holds it). */
  loadAgent(id: string): Promise<Agent>;
}

/** `em` is the operation's own fork, so loaders also work where no request scope is active (subscriptions). */
export function createSchedulingLoaders(em: EntityManager): SchedulingLoaders {
  const agentById = new DataLoader<string, Agent | null>(async (ids) => {
    const found = new Map((await em.find(Agent, { id: { $in: [...ids] } })).map((agent) => [agent.id, agent]));
    return ids.map((id) => found.get(id) ?? null);
  });
  return {
    agentById,
    childrenByParentId: new DataLoader(async (parentIds) => {
      const children = await em.find(Agent, { parent: { $in: [...parentIds] } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return parentIds.map((parentId) => children.filter((child) => child.parent?.id === parentId));
    }),
    async loadAgent(id) {
      const agent = await agentById.load(id);
      if (!agent) throw new Error(`agent ${id} is referenced but does not exist`);
      return agent;
    },
  };
}
