/**
 * Tool directory (seed 001): a catalogue of tools, votes, submissions by humans and agents, magic-link
 * accounts and rate limits.
 *
 * Glossary
 * - tool: an approved entry with a unique normalised URL; `submission_source` is `agent` when the
 *   request carried X-Agent-Id.
 * - vote: one user's mark on one tool, toggled; `vote_count` always equals the vote rows (a trigger).
 * - trending: votes of the last seven days from per-day counters, newer days weighing more.
 * - magic link: a one-time, 15-minute sign-in token sent by e-mail, redeemed for a 7-day JWT.
 */
import { registerConstraintErrors } from '../../platform/errors.js';
import { DIRECTORY_CONSTRAINTS } from './constraint-errors.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { JwtIssuer } from '../../platform/auth/jwt.js';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import type { PlatformContext } from '../../platform/graphql/server.js';
import type { RateLimits } from '../../platform/http/rate-limit.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { AccountService } from './account.service.js';
import { Category } from './entities/category.entity.js';
import { MagicLinkToken } from './entities/magic-link-token.entity.js';
import { Tool } from './entities/tool.entity.js';
import { User } from './entities/user.entity.js';
import { Vote } from './entities/vote.entity.js';
import type { DirectoryContext } from './graphql/context.js';
import { DirectoryResolver } from './graphql/directory.resolver.js';
import { createDirectoryLoaders } from './graphql/loaders.js';
import { DirectoryBudget, type DirectoryLimits } from './directory-budget.js';
import { registerDirectoryRoutes } from './rest/directory.routes.js';
import { ToolService } from './tool.service.js';
import { redeemMagicLinkFunction } from './sql/redeem-magic-link.function.js';
import { toggleVoteFunction } from './sql/toggle-vote.function.js';
import { votesMaintainCountsTrigger } from './sql/votes-maintain-counts.trigger.js';

export type { DirectoryContext } from './graphql/context.js';
export { ToolService } from './tool.service.js';
export { SESSION_TTL_SECONDS } from './account.service.js';

export const directoryEntities = [Category, User, Tool, Vote, MagicLinkToken];
export const directoryResolvers = [DirectoryResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const directorySqlDefinitions = [votesMaintainCountsTrigger, toggleVoteFunction, redeemMagicLinkFunction];

export interface DirectoryDeps {
  em: EntityManager;
  statements: Statements;
  clock: Clock;
  jwt: JwtIssuer;
  mailer: Mailer;
  rateLimits: RateLimits;
  publicUrl: string;
  limits: DirectoryLimits;
}

export function createDirectoryModule(deps: DirectoryDeps) {
  registerConstraintErrors(DIRECTORY_CONSTRAINTS);
  const tools = new ToolService(deps.em, deps.statements, deps.clock);
  const accounts = new AccountService(deps.em, deps.statements, deps.clock, deps.jwt, deps.mailer, deps.publicUrl, deps.rateLimits);
  const budget = new DirectoryBudget(deps.rateLimits, deps.limits);
  return {
    tools,
    accounts,
    resolvers: [new DirectoryResolver(tools, accounts, budget)],
    createContext: (base: PlatformContext): DirectoryContext['directory'] => createDirectoryLoaders(tools, base.actor),
    registerRoutes: (app: FastifyInstance) => registerDirectoryRoutes(app, { tools, accounts, budget }),
  };
}
