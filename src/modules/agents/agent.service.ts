import type { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import { notThePrincipal, type Actor, type TokenResolver } from '../../platform/auth/actor.js';
import { generateToken, sha256Hex } from '../../platform/auth/credentials.js';
import type { Clock } from '../../platform/clock.js';
import type { Notifications } from '../../platform/db/notifications.js';
import { maySeeSettings } from './access.js';
import { AGENT_CONSTRAINTS } from './constraint-errors.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import type { RateLimitPolicy, RateLimits } from '../../platform/http/rate-limit.js';
import { freeFormObjectProblem } from '../../platform/free-form-object.js';
import { Agent, FREE_BUSY_VISIBILITIES, type FreeBusyVisibility } from './entities/agent.entity.js';
import { AGENT_BY_TOKEN_HASH, AGENTS_BY_ID, agentRecordOf, CHILDREN_PAGES, toAgentRecord, type AgentRecord } from './sql/agent.sql.js';
import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import { applyFanOutLimits, fanOutRefusal, type FanOutLimits } from './fan-out-limits.js';

export type { AgentRecord } from './sql/agent.sql.js';

export const AGENT_LIMITS = {
  nameMaxLength: 120,
  idempotencyKeyMaxLength: SCHEDULING_LIMITS.idempotencyKeyMaxLength,
  /** One page of `Agent.children`. */
  childrenDefault: 50,
  childrenMax: 100,
  /**
   * Child agents in one GraphQL operation, over every `children` page of it. Pages nest
   * (`children { children { … } }`), up to 100 times per level; graphql-armor's cost multiplies a
   * selection by a literal `first` only, not by a variable or the default, which it cannot see.
   */
  childrenPerOperation: 1_000,
} as const;

export const AGENT_TOKEN_PREFIX = 'agt_';

declare module '../../platform/auth/actor.js' {
  interface Principals {
    /** An agent, by its `public_token`. */
    agent: { readonly agent: AgentRecord };
  }
}

export interface CreateAgentInput {
  name: string;
  metadata?: Record<string, unknown> | undefined;
  config?: Record<string, unknown> | undefined;
  idempotencyKey?: string | undefined;
  /** Only `true` is meaningful: claim the first agent of a new installation. */
  bootstrap?: boolean | undefined;
}

export interface CreatedAgent {
  agent: AgentRecord;
  /** The credential in clear; exists only in this result, never in storage. */
  publicToken: string;
}

const MISSING_CREDENTIAL =
  'missing credential: send Authorization: Bearer <public_token> or X-API-Key: <public_token>';
const INVALID_CREDENTIAL =
  'invalid credential: the token is not recognised; send the public_token returned when the agent was created';
const NOT_AN_AGENT =
  'this operation acts as an agent: send an agent public_token (agt_…); a directory session or the admin token is not one';

/** The agent an operation acts as; 401 `unauthorized` for any other caller, saying why. */
export function agentOf(actor: Actor): AgentRecord {
  if (actor.kind === 'agent') return actor.agent;
  throw notThePrincipal(actor, MISSING_CREDENTIAL, NOT_AN_AGENT);
}

function validate(input: CreateAgentInput): void {
  const errors: FieldErrors = {};
  if (input.name.length < 1 || input.name.length > AGENT_LIMITS.nameMaxLength) {
    errors.name = `must be 1 to ${AGENT_LIMITS.nameMaxLength} characters`;
  }
  if (input.idempotencyKey !== undefined && (input.idempotencyKey.length < 1 || input.idempotencyKey.length > AGENT_LIMITS.idempotencyKeyMaxLength)) {
    errors.idempotency_key = `must be 1 to ${AGENT_LIMITS.idempotencyKeyMaxLength} characters`;
  }
  if (input.bootstrap !== undefined && input.bootstrap !== true) errors.bootstrap = 'must be true';
  for (const field of ['metadata', 'config'] as const) {
    const problem = input[field] === undefined ? null : freeFormObjectProblem(input[field]);
    if (problem) errors[field] = problem;
  }
  if (Object.keys(errors).length) throw AppError.validation(errors);
}

/**
 * Credentials resolved recently, per process: most requests of an agent then cost no lookup. Bounded
 * in size and age; the `agents_credential_changed` trigger tells every process to drop an entry at
 * once when its agent changes or goes, and a lost notification connection drops them all.
 */
export const CREDENTIAL_CACHE = { maxEntries: 10_000, ttlMs: 60_000 } as const;
export const AGENT_CREDENTIALS_CHANNEL = 'agent_credentials';

/** Agent seats: the bootstrap of the first agent, child agents, and resolving a credential to its agent. */
export class AgentService {
  private readonly credentials = new LRUCache<string, AgentRecord>({ max: CREDENTIAL_CACHE.maxEntries, ttl: CREDENTIAL_CACHE.ttlMs });
  /**
   * Lookups under way, by token hash: requests that miss the cache at once share one. 1,000 sockets of
   * 100 agents connecting together made 537 lookups for 100 tokens, each waiting for a pool connection.
   */
  private readonly lookups = new Map<string, Promise<AgentRecord>>();
  /** Counts invalidations: a lookup that raced one must not cache the row it read before it. */
  private invalidations = 0;
  /** Child agents a parent may create per minute, counted in PostgreSQL for every process. */
  private readonly creations: RateLimitPolicy;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly statements: Statements,
    notifications: Notifications,
    private readonly rateLimits: RateLimits,
    private readonly limits: FanOutLimits,
  ) {
    this.creations = { name: 'agent-create', points: limits.agentCreatePerMin, durationSeconds: 60, unit: 'child agents' };
    notifications.on(AGENT_CREDENTIALS_CHANNEL, (tokenHash) => {
      this.invalidations++;
      this.credentials.delete(tokenHash);
      this.lookups.delete(tokenHash);
    });
    notifications.onReconnect(() => {
      this.invalidations++;
      this.credentials.clear();
      this.lookups.clear();
    });
  }

  /** Agent tokens (`agt_…`) as callers: the credential cache first, then one index probe. */
  readonly tokens: TokenResolver = {
    claims: (token) => token.startsWith(AGENT_TOKEN_PREFIX),
    resolve: async (token) => ({ kind: 'agent', agent: await this.byToken(token) }),
  };

  private byToken(token: string): Promise<AgentRecord> {
    const tokenHash = sha256Hex(token);
    const cached = this.credentials.get(tokenHash);
    if (cached) return Promise.resolve(cached);
    let lookup = this.lookups.get(tokenHash);
    if (!lookup) {
      lookup = this.lookUp(tokenHash);
      this.lookups.set(tokenHash, lookup);
      // An invalidation may have replaced it meanwhile: only this lookup's own entry goes.
      const settled = () => void (this.lookups.get(tokenHash) === lookup && this.lookups.delete(tokenHash));
      lookup.then(settled, settled);
    }
    return lookup;
  }

  /**
   * One lookup of a credential. Requests that arrive after an invalidation never join a lookup begun
   * before it (the invalidation drops it from `lookups`), so a changed agent is read again.
   */
  private async lookUp(tokenHash: string): Promise<AgentRecord> {
    const invalidationsBefore = this.invalidations;
    const row = await this.statements.one(AGENT_BY_TOKEN_HASH, [tokenHash]);
    if (!row) throw new AppError('unauthorized', INVALID_CREDENTIAL);
    const agent = toAgentRecord(row);
    if (this.invalidations === invalidationsBefore) this.credentials.set(tokenHash, agent);
    return agent;
  }

  /** The calling agent itself. */
  me(actor: Actor): AgentRecord {
    return agentOf(actor);
  }

  /** Whether `actor` may read an agent's own settings (metadata, config): the access table's `settings`. */
  maySeeSettings(actor: Actor, agent: Pick<AgentRecord, 'id' | 'parentId'>): boolean {
    return actor.kind === 'agent' && maySeeSettings(actor.agent, agent);
  }

  /**
   * The caller's own free/busy visibility: who may ask `availability` and `proposeFirstAvailable`
   * about its calendar. Returns the agent as it now is.
   */
  /** Agents by id, in one statement (GraphQL's loaders batch every id an operation asks for). */
  async byIds(ids: readonly string[]): Promise<Map<string, AgentRecord>> {
    if (ids.length === 0) return new Map();
    return new Map((await this.statements.rows(AGENTS_BY_ID, [ids])).map((row) => [row.id, toAgentRecord(row)]));
  }

  /** The same page (`first` children after the child `after`, oldest first) of each parent's children, in one statement. */
  async childrenPages(parentIds: readonly string[], after: string | null, first: number): Promise<Map<string, AgentRecord[]>> {
    const rows = await this.statements.rows(CHILDREN_PAGES, [parentIds, after, first]);
    return new Map(parentIds.map((parentId) => [parentId, rows.filter((row) => row.parent_id === parentId).map(toAgentRecord)]));
  }

  async setFreeBusyVisibility(caller: Actor, visibility: FreeBusyVisibility): Promise<AgentRecord> {
    const actor = agentOf(caller);
    if (!(FREE_BUSY_VISIBILITIES as readonly string[]).includes(visibility)) {
      throw AppError.validation({ visibility: `must be one of ${FREE_BUSY_VISIBILITIES.join(', ')}` });
    }
    await this.em.nativeUpdate(Agent, { id: actor.id }, { freeBusyVisibility: visibility });
    // The row's trigger tells every process to forget the cached credential; this process forgets it
    // now, so that the caller's next request already reads the new setting.
    this.forgetCredentialsOf(actor.id);
    return Object.freeze({ ...actor, freeBusyVisibility: visibility });
  }

  private forgetCredentialsOf(agentId: string): void {
    this.invalidations++;
    // Which agent a lookup under way will find is not known yet: none of them is joined any more.
    this.lookups.clear();
    for (const [tokenHash, agent] of this.credentials.entries()) {
      if (agent.id === agentId) this.credentials.delete(tokenHash);
    }
  }

  /**
   * Creates an agent. With `bootstrap: true` and no credential it claims the first agent of a new
   * installation; afterwards bootstrap answers `bootstrap_claimed` whatever credential is sent.
   * Without bootstrap the caller must authenticate and becomes the new agent's parent, within its
   * budget of creations per minute (429 `rate_limited`) and its family's size (409 `limit_exceeded`).
   */
  async create(actor: Actor, input: CreateAgentInput): Promise<CreatedAgent> {
    validate(input);
    let parent: AgentRecord | null = null;
    if (input.bootstrap) {
      // Fast answer for the common case; the partial unique index decides every race.
      if (await this.anyAgentExists()) throw bootstrapClaimed();
      if (actor.kind !== 'anonymous' || actor.credential !== 'none') throw new AppError('unauthorized', 'bootstrap takes no credential: send the request without one');
    } else {
      parent = agentOf(actor);
      await this.rateLimits.consume(this.creations, parent.id);
    }

    const publicToken = generateToken(AGENT_TOKEN_PREFIX);
    try {
      const agent = await this.em.transactional(async (tx) => {
        await applyFanOutLimits(tx, this.limits);
        const created = tx.create(Agent, {
          name: input.name,
          metadata: input.metadata ?? {},
          config: input.config ?? {},
          tokenHash: sha256Hex(publicToken),
          idempotencyKey: input.idempotencyKey ?? null,
          parent: parent?.id ?? null,
          createdAt: this.clock.now(),
          freeBusyVisibility: 'family',
        });
        await tx.flush();
        return created;
      });
      return { agent: agentRecordOf(agent), publicToken };
    } catch (error) {
      // A full family; else a second root (`agents_single_root`) or a reused key, which
      // constraint-errors.ts turns into what the client hears.
      throw fanOutRefusal(error, this.limits) ?? error;
    }
  }

  // Every agent descends from the bootstrap agent, so "any agent" is "the parentless one".
  private async anyAgentExists(): Promise<boolean> {
    return (await this.em.findOne(Agent, { parent: null }, { fields: ['id'] })) !== null;
  }
}

function bootstrapClaimed(): AppError {
  const { code, message } = AGENT_CONSTRAINTS.agents_single_root;
  return new AppError(code, message);
}
