import { DriverException } from '@mikro-orm/core';

/**
 * Reading PostgreSQL errors. Services ask which named constraint a write violated and turn it into
 * their own domain error (`bookings_no_overlap` → `slot_taken`); the transports turn any violation a
 * service did not claim into a plain `conflict` (see `toAppError`).
 */
const UNIQUE_VIOLATION = '23505';
const EXCLUSION_VIOLATION = '23P01';
const CHECK_VIOLATION = '23514';
const SERIALIZATION_FAILURE = '40001';
const DEADLOCK_DETECTED = '40P01';

interface PgErrorFields {
  code?: string;
  constraint?: string;
}

function pgFields(error: unknown): PgErrorFields | undefined {
  if (error instanceof DriverException) return error as PgErrorFields;
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') {
    return error as PgErrorFields;
  }
  return undefined;
}

/** The name of the unique, exclusion or check constraint that `error` reports, if it is such a violation. */
export function violatedConstraint(error: unknown): string | undefined {
  const fields = pgFields(error);
  if (fields?.code !== UNIQUE_VIOLATION && fields?.code !== EXCLUSION_VIOLATION && fields?.code !== CHECK_VIOLATION) return undefined;
  return fields.constraint ?? '';
}

/** Whether retrying the whole transaction may succeed (deadlock or serialization failure). */
export function isTransientConflict(error: unknown): boolean {
  const code = pgFields(error)?.code;
  return code === SERIALIZATION_FAILURE || code === DEADLOCK_DETECTED;
}

/**
 * Runs `work` (a whole transaction) again when PostgreSQL broke it to resolve a deadlock or a
 * serialization conflict, so callers never see those as 500s. Other errors pass straight through.
 */
export async function retryTransient<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isTransientConflict(error) || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
