import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, type ErrorCode } from '../../platform/errors.js';
import { IdempotencyKey } from './entities/idempotency-key.entity.js';

/** Keys are honoured for at least this long; an older key counts as unused. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** What a repeat of the request gets: the first result, or the first domain error. */
export type StoredOutcome<T> = { ok: T } | { error: { code: ErrorCode; message: string } };

export interface IdempotentRequest {
  agentId: string;
  operation: string;
  key: string;
  /** The request as the client meant it; equal requests hash equally whatever the key order. */
  body: unknown;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, entry]) => entry !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, entry]) => [key, canonical(entry)]),
    );
  }
  return value;
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical(body))).digest('hex');
}

/**
 * Reads the stored outcome of an earlier request with this key, inside the caller's transaction
 * (which already serialises the agent's writes). Another body under the same key is a conflict.
 */
export async function findStoredOutcome<T>(tx: EntityManager, request: IdempotentRequest, now: Date): Promise<StoredOutcome<T> | undefined> {
  const stored = await tx.findOne(IdempotencyKey, { agent: request.agentId, operation: request.operation, key: request.key });
  if (!stored || now.getTime() - stored.createdAt.getTime() > IDEMPOTENCY_TTL_MS) return undefined;
  if (stored.requestHash !== requestHash(request.body)) throw idempotencyConflict();
  return stored.outcome as StoredOutcome<T>;
}

export function idempotencyConflict(): AppError {
  return new AppError('conflict', 'Idempotency-Key was already used with a different request body');
}

/** Records the first outcome; an expired key is overwritten. */
export async function storeOutcome<T>(tx: EntityManager, request: IdempotentRequest, outcome: StoredOutcome<T>, now: Date): Promise<void> {
  await tx.execute(
    `insert into idempotency_keys (agent_id, operation, key, request_hash, outcome, created_at)
     values (?, ?, ?, ?, ?::jsonb, ?)
     on conflict (agent_id, operation, key) do update
       set request_hash = excluded.request_hash, outcome = excluded.outcome, created_at = excluded.created_at
       where idempotency_keys.created_at < excluded.created_at - interval '24 hours'`,
    [request.agentId, request.operation, request.key, requestHash(request.body), JSON.stringify(outcome), now],
  );
}

/** Replays a stored outcome: the first result, or the first domain error thrown again. */
export function replay<T>(outcome: StoredOutcome<T>): T {
  if ('error' in outcome) throw new AppError(outcome.error.code, outcome.error.message);
  return outcome.ok;
}
