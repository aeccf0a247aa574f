/**
 * Scheduling (seed 000): agents, their calendars and slot transfers.
 *
 * Glossary
 * - agent: a seat that owns a calendar and one credential (`public_token`, `agt_…`, stored as SHA-256).
 * - bootstrap agent: the first agent of an installation, claimed without a credential; every other
 *   agent records the agent that created it as its parent.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { AgentService } from './agent.service.js';
import { Agent } from './entities/agent.entity.js';
import { AgentResolver } from './graphql/agent.resolver.js';
import { createSchedulingLoaders } from './graphql/loaders.js';
import { registerAgentRoutes } from './rest/agent.routes.js';

export type { SchedulingContext } from './graphql/context.js';
export { AgentService } from './agent.service.js';

export const schedulingEntities = [Agent];
export const schedulingResolvers = [AgentResolver];

export interface SchedulingDeps {
  em: EntityManager;
  clock: Clock;
}

/** Builds the scheduling services and the adapters over them. */
export function createSchedulingModule({ em, clock }: SchedulingDeps) {
  const agents = new AgentService(em, clock);
  return {
    agents,
    resolvers: [new AgentResolver(agents)],
    createLoaders: () => createSchedulingLoaders(agents),
    registerRoutes: (app: FastifyInstance) => registerAgentRoutes(app, agents),
  };
}
