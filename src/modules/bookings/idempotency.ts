import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, type ErrorCode } from '../../platform/errors.js';

/**
 * Idempotency keys. Their one home is a pair of SQL functions, `idempotency_lookup` and
 * `idempotency_record` (sql/): `create_booking` calls them inside its own transaction, and the services
 * whose writes go through the ORM (proposals) call them through `findStoredOutcome` and `storeOutcome`
 * here, in theirs. The request hash and the time a key is honoured are decided here, for both.
 */

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

/** Keys recorded before this instant count as unused. */
export function keysValidAfter(now: Date): Date {
  return new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
}

/**
 * Reads the stored outcome of an earlier request with this key, inside the caller's transaction
 * (which already serialises the agent's writes). Another body under the same key is a conflict.
 */
export async function findStoredOutcome<T>(tx: EntityManager, request: IdempotentRequest, now: Date): Promise<StoredOutcome<T> | undefined> {
  const [row] = await tx.execute<{ found: { conflict: true } | { replay: StoredOutcome<T> } | null }[]>(
    'select idempotency_lookup(?, ?, ?, ?, ?) as found',
    [request.agentId, request.operation, request.key, requestHash(request.body), keysValidAfter(now)],
  );
  const found = row?.found;
  if (!found) return undefined;
  if ('conflict' in found) throw idempotencyConflict();
  return found.replay;
}

export function idempotencyConflict(): AppError {
  return new AppError('conflict', 'Idempotency-Key was already used with a different request body');
}

/** Records the first outcome; an expired key is overwritten. */
export async function storeOutcome<T>(tx: EntityManager, request: IdempotentRequest, outcome: StoredOutcome<T>, now: Date): Promise<void> {
  await tx.execute('select idempotency_record(?, ?, ?, ?, ?::jsonb, ?, ?)', [
    request.agentId,
    request.operation,
    request.key,
    requestHash(request.body),
    JSON.stringify(outcome),
    now,
    keysValidAfter(now),
  ]);
}

/** Replays a stored outcome: the first result, or the first domain error thrown again. */
export function replay<T>(outcome: StoredOutcome<T>): T {
  if ('error' in outcome) throw new AppError(outcome.error.code, outcome.error.message);
  return outcome.ok;
}
