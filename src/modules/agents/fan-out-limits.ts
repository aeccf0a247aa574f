import type { EntityManager } from '@mikro-orm/postgresql';
import { LIMIT_SETTINGS } from './sql/configured-limit.function.js';
import { violatedConstraint } from '../../platform/db/pg-errors.js';
import { AppError } from '../../platform/errors.js';

/**
 * How far one agent's seats and requests may multiply (issue 24): each bound is configuration
 * (config.ts) and held by the database where requests race.
 */
export interface FanOutLimits {
  /** Child agents one agent may create per minute (a rate-limiter budget, shared by every process). */
  agentCreatePerMin: number;
  /** Agents in one family, a root and all its descendants (trigger `agents_family_limit`). */
  agentFamilyMax: number;
  /** Pending proposals from one agent to one target (trigger `proposals_pending_per_target_limit`). */
  pendingProposalsMax: number;
}

/**
 * Hands the configured bounds to the triggers, for this transaction only (`set_config(…, true)`);
 * call it in the transaction of the write they guard.
 */
export async function applyFanOutLimits(tx: EntityManager, limits: FanOutLimits): Promise<void> {
  await tx.execute('select set_config(?, ?, true), set_config(?, ?, true)', [
    LIMIT_SETTINGS.agentFamilyMax.name,
    String(limits.agentFamilyMax),
    LIMIT_SETTINGS.pendingProposalsMax.name,
    String(limits.pendingProposalsMax),
  ]);
}

/** The refusal a client hears when one of the triggers refused the write, with the configured number; else undefined. */
export function fanOutRefusal(error: unknown, limits: FanOutLimits): AppError | undefined {
  switch (violatedConstraint(error)) {
    case 'agents_family_limit':
      return new AppError('limit_exceeded', `an agent family (the root agent and all its descendants) holds at most ${limits.agentFamilyMax} agents`);
    case 'proposals_pending_per_target_limit':
      return new AppError(
        'limit_exceeded',
        `at most ${limits.pendingProposalsMax} proposals from one agent to one target may be pending: withdraw one or wait for the target to decide`,
      );
    default:
      return undefined;
  }
}
