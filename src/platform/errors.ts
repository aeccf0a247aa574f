import { isDatabaseUnavailable, isUnstorableText, violatedConstraint } from './db/pg-errors.js';

/**
 * Domain errors. Services throw `AppError` with a code from this closed list; each transport
 * (REST, GraphQL, MCP) renders it, and this table is the one place that maps a code to an HTTP status.
 */
export const ERROR_STATUS = {
  validation: 400,
  bad_rrule: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  /** A bound on how many of something one caller may have (webhooks per agent, operations per socket). */
  limit_exceeded: 409,
  bootstrap_claimed: 409,
  slot_taken: 409,
  proposal_not_pending: 409,
  booking_cap_reached: 429,
  rate_limited: 429,
  /** Subscriptions only: a subscriber left too many events unread and must resume from its cursor. */
  subscriber_lagging: 429,
  upstream_unavailable: 503,
  /** The database cannot be reached or did not answer in time; the client may retry (Retry-After). */
  unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Field name → first validation message, the body of a seed-000 400 response. */
export type FieldErrors = Record<string, string>;

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Only for `validation`: which fields were wrong. */
    readonly fields?: FieldErrors,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }

  static validation(fields: FieldErrors): AppError {
    const [first] = Object.entries(fields);
    return new AppError('validation', first ? `${first[0]} ${first[1]}` : 'invalid input', fields);
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

/** Seconds a client is asked to wait before retrying an `unavailable` answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * What a transport should render for any thrown value: the AppError itself, `unavailable` when the
 * database could not answer, a `conflict` for a constraint violation no service claimed, `validation`
 * for text PostgreSQL cannot store, and
 * `undefined` for everything else (a bare 500).
 */
export function toAppError(error: unknown): AppError | undefined {
  if (isAppError(error)) return error;
  if (isDatabaseUnavailable(error)) return new AppError('unavailable', 'the database is not answering; try again shortly');
  if (violatedConstraint(error) !== undefined) {
    return new AppError('conflict', 'the change conflicts with existing data');
  }
  // A backstop: inputs are checked field by field, but a NUL character in any text must not be a 500.
  if (isUnstorableText(error)) return AppError.validation({ input: 'contains a character that cannot be stored (such as U+0000)' });
  return undefined;
}
