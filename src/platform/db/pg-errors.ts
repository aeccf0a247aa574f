import { DriverException } from '@mikro-orm/core';

/**
 * Reading PostgreSQL errors. `toAppError` (platform/errors.ts) asks which named constraint a write
 * violated and looks it up in the tables the modules registered (`booking_slots_no_overlap` →
 * `slot_taken`; an unregistered one is a plain `conflict`), and turns an error `isDatabaseUnavailable`
 * recognises into `unavailable`. `retryTransient` reruns a transaction broken off by a deadlock or a
 * serialization failure.
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
/** An error PostgreSQL sent (it has a severity); anything else may have broken the connection. */
export function isServerError(error: unknown): boolean {
  return typeof (error as { severity?: unknown } | null)?.severity === 'string';
}

export function violatedConstraint(error: unknown): string | undefined {
  const fields = pgFields(error);
  if (fields?.code !== UNIQUE_VIOLATION && fields?.code !== EXCLUSION_VIOLATION && fields?.code !== CHECK_VIOLATION) return undefined;
  return fields.constraint ?? '';
}

/**
 * SQLSTATEs that mean the database cannot serve now rather than that the request was wrong: class 08
 * (connection exceptions; see isConnectionException), 53300 (too many connections), 57P01–57P03 (shutting down, starting up),
 * 57014 (a statement cancelled by statement_timeout), 55P03 (lock_timeout), 25P03 (a transaction ended
 * for idling).
 */
const UNAVAILABLE_STATES = new Set(['53300', '57P01', '57P02', '57P03', '57014', '55P03', '25P03']);
/** What `pg` and the socket say when no answer comes: a refused, reset, timed-out or closed connection. */
const UNAVAILABLE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect', // pg-pool: no free connection within connectionTimeoutMillis
  'Connection terminated', // pg: the connection closed, or could not open in time
  'Query read timeout', // pg: no answer within query_timeout
  'is not queryable', // pg: a client whose connection already failed
];

/**
 * Whether `error` says the database could not be reached or did not answer in time (see timeouts.ts),
 * looking through the wrappers the ORM puts around driver errors.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  // An HTTP error about the request itself (a client that hung up mid-body is ECONNRESET with 400).
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode === 'number' && statusCode < 500) return false;
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 4; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (isConnectionException(code) || UNAVAILABLE_STATES.has(code) || UNAVAILABLE_NETWORK_CODES.has(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((known) => message.includes(known))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Class 08 but 08P01 (protocol_violation), which a request can cause (too many bind parameters). */
const isConnectionException = (code: string) => code.startsWith('08') && code !== '08P01';

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

/** 22021 and 22P05: a text value PostgreSQL cannot store, such as one containing U+0000. */
const CHARACTER_NOT_IN_REPERTOIRE = '22021';
const UNTRANSLATABLE_CHARACTER = '22P05';

/**
 * Whether PostgreSQL refused a text value a client sent (a NUL character passes JSON and HTTP but no
 * PostgreSQL text column). The client's input is at fault, not the server.
 */
export function isUnstorableText(error: unknown): boolean {
  const code = pgFields(error)?.code;
  return code === CHARACTER_NOT_IN_REPERTOIRE || code === UNTRANSLATABLE_CHARACTER;
}
