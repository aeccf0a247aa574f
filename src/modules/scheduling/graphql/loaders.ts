import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import type { Statements } from '../../../platform/db/statements.js';
import { Agent } from '../entities/agent.entity.js';
import { AGENTS_BY_ID, agentRecordOf, toAgentRecord, type AgentRecord } from '../sql/agent.sql.js';

/** Per-operation batching for scheduling relations; built in the GraphQL context, never shared. */
export interface SchedulingLoaders {
  agentById: DataLoader<string, AgentRecord | null>;
  childrenByParentId: DataLoader<string, AgentRecord[]>;
  /** An agent that must exist (a foreign key holds it). */
  loadAgent(id: string): Promise<AgentRecord>;
  /** Tells the loader about an agent already in hand (the caller), so it is not read again. */
  prime(agent: AgentRecord): void;
}

/** `em` is the operation's own fork, so loaders also work where no request scope is active (subscriptions). */
export function createSchedulingLoaders(em: EntityManager, statements: Statements): SchedulingLoaders {
  const agentById = new DataLoader<string, AgentRecord | null>(async (ids) => {
    const found = new Map((await statements.rows(AGENTS_BY_ID, [[...ids]])).map((row) => [row.id, toAgentRecord(row)]));
    return ids.map((id) => found.get(id) ?? null);
  });
  return {
    agentById,
    childrenByParentId: new DataLoader(async (parentIds) => {
      const children = await em.find(Agent, { parent: { $in: [...parentIds] } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return parentIds.map((parentId) => children.filter((child) => child.parent?.id === parentId).map(agentRecordOf));
    }),
    async loadAgent(id) {
      const agent = await agentById.load(id);
      if (!agent) throw new Error(`agent ${id} is referenced but does not exist`);
      return agent;
    },
    prime(agent) {
      agentById.prime(agent.id, agent);
    },
  };
}
