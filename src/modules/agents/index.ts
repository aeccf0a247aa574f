/**
 * Agents (seed 000): the seats that own calendars, their credentials and their families.
 *
 * Glossary
 * - agent: a seat that owns a calendar and one credential (`public_token`, `agt_…`, stored as SHA-256).
 * - bootstrap agent: the first agent of an installation, claimed without a credential; every other
 *   agent records the agent that created it as its parent.
 * - family: an agent, its parent and its children (who may see each other's settings and free/busy).
 * - free/busy visibility: who may ask for an agent's free/busy (`family`: itself, its parent, its
 *   children; `anyone`; `nobody`: itself).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import type { PlatformContext } from '../../platform/graphql/server.js';
import { AgentService } from './agent.service.js';
import { AGENT_CONSTRAINTS } from './constraint-errors.js';
import { Agent } from './entities/agent.entity.js';
import { createAgentLoaders, type AgentLoaders } from './graphql/agent.loaders.js';
import { AgentResolver } from './graphql/agent.resolver.js';
import { registerAgentRoutes } from './rest/agent.routes.js';
import { agentCredentialChangedTrigger } from './sql/agent-credential-changed.trigger.js';

export { agentOf, AgentService, AGENT_LIMITS, AGENT_TOKEN_PREFIX, type AgentRecord } from './agent.service.js';
export { Agent, FREE_BUSY_VISIBILITIES, type FreeBusyVisibility } from './entities/agent.entity.js';
export type { AgentsContext } from './graphql/agent.loaders.js';
export { AgentNode } from './graphql/agent.types.js';

export const agentsEntities = [Agent];
export const agentsResolvers = [AgentResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const agentsSqlDefinitions = [agentCredentialChangedTrigger];

export interface AgentsDeps {
  em: EntityManager;
  clock: Clock;
  statements: Statements;
  /** The process's LISTEN connection: a changed credential is forgotten by every process. */
  notifications: Notifications;
}

export function createAgentsModule(deps: AgentsDeps) {
  registerConstraintErrors(AGENT_CONSTRAINTS);
  const agents = new AgentService(deps.em, deps.clock, deps.statements, deps.notifications);
  return {
    agents,
    resolvers: [new AgentResolver(agents)],
    /** The `agents` slice of the GraphQL context: per-operation loaders. */
    createContext: (base: PlatformContext): AgentLoaders => createAgentLoaders(deps.statements, base.actor),
    registerRoutes: (app: FastifyInstance) => registerAgentRoutes(app, agents),
  };
}
