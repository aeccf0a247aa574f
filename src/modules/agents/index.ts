/**
 * Agents (seed 000): the seats that own calendars, their credentials and their families.
 *
 * Glossary
 * - agent: a seat that owns a calendar and one credential (`public_token`, `agt_…`, stored as SHA-256).
 * - bootstrap agent: the first agent of an installation, claimed without a credential; every other
 *   agent records the agent that created it as its parent.
 * - family: an agent, its parent and its children (who may see each other's settings and free/busy).
 * - family (limits): a root agent and all its descendants (at most AGENT_FAMILY_MAX agents; `agents.root_id`).
 *   The free/busy visibility `family` is narrower: an agent, its parent and its children.
 * - free/busy visibility: who may ask for an agent's free/busy (`family`: itself, its parent, its
 *   children; `anyone`; `nobody`: itself).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import type { RateLimits } from '../../platform/http/rate-limit.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import type { PlatformContext } from '../../platform/graphql/server.js';
import { AgentService } from './agent.service.js';
import { AGENT_CONSTRAINTS } from './constraint-errors.js';
import { AgentFamily } from './entities/agent-family.entity.js';
import { Agent } from './entities/agent.entity.js';
import type { FanOutLimits } from './fan-out-limits.js';
import { createAgentLoaders, type AgentLoaders } from './graphql/agent.loaders.js';
import { AgentResolver } from './graphql/agent.resolver.js';
import { registerAgentRoutes } from './rest/agent.routes.js';
import { agentCredentialChangedTrigger } from './sql/agent-credential-changed.trigger.js';
import { agentFamilyLimitTrigger } from './sql/agent-family-limit.trigger.js';
import { agentFamilyRootTrigger } from './sql/agent-family-root.trigger.js';
import { configuredLimitFunction } from './sql/configured-limit.function.js';

export {
  ACCESS,
  actForRuleSql,
  changeFeedRuleSql,
  freeBusyRuleSql,
  mayActFor,
  mayReadChangeFeed,
  maySeeFreeBusy,
  maySeeSettings,
  notActingFor,
  notTheOwner,
  relationOf,
  requireOwner,
  type Relation,
} from './access.js';
export { agentOf, AgentService, AGENT_LIMITS, AGENT_TOKEN_PREFIX, type AgentRecord } from './agent.service.js';
export { Agent, FREE_BUSY_VISIBILITIES, type FreeBusyVisibility } from './entities/agent.entity.js';
export { applyFanOutLimits, fanOutRefusal, type FanOutLimits } from './fan-out-limits.js';
export type { AgentLoaders, AgentsContext } from './graphql/agent.loaders.js';
export { configuredLimit, LIMIT_SETTINGS } from './sql/configured-limit.function.js';
export { AgentNode } from './graphql/agent.types.js';

export const agentsEntities = [Agent, AgentFamily];
export const agentsResolvers = [AgentResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const agentsSqlDefinitions = [configuredLimitFunction, agentCredentialChangedTrigger, agentFamilyRootTrigger, agentFamilyLimitTrigger];

export interface AgentsDeps {
  em: EntityManager;
  clock: Clock;
  statements: Statements;
  /** The process's LISTEN connection: a changed credential is forgotten by every process. */
  notifications: Notifications;
  /** Budgets kept in PostgreSQL for every process (agent creations per minute). */
  rateLimits: RateLimits;
  fanOutLimits: FanOutLimits;
}

export function createAgentsModule(deps: AgentsDeps) {
  registerConstraintErrors(AGENT_CONSTRAINTS);
  const agents = new AgentService(deps.em, deps.clock, deps.statements, deps.notifications, deps.rateLimits, deps.fanOutLimits);
  return {
    agents,
    resolvers: [new AgentResolver(agents)],
    /** The `agents` slice of the GraphQL context: per-operation loaders. */
    createContext: (base: PlatformContext): AgentLoaders => createAgentLoaders(agents, base.actor),
    registerRoutes: (app: FastifyInstance) => registerAgentRoutes(app, agents),
  };
}
