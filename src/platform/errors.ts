import { isDatabaseUnavailable, isUnstorableText, violatedConstraint } from './db/pg-errors.js';
import { boundFieldErrors, boundMessage } from './echo.js';

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
  /** GraphQL over HTTP: a `documentId` that names no trusted document. */
  persisted_document_not_found: 404,
  /** GraphQL: the operator accepts only trusted documents from this kind of caller (GRAPHQL_TRUSTED_DOCUMENTS_ONLY). */
  trusted_document_required: 403,
  conflict: 409,
  /** A bound on how many of something one caller may have (webhooks per agent, operations per socket). */
  limit_exceeded: 409,
  bootstrap_claimed: 409,
  /** The range overlaps a booking or a live hold on that calendar. */
  slot_taken: 409,
  /** The range is free, but a buffer (of the new booking, or of one next to it) would overlap. */
  buffer_conflict: 409,
  /** The calendar's rules (issue 27): its working hours, minimum notice, maximum advance, limits per day and week. */
  outside_working_hours: 409,
  notice_too_short: 409,
  too_far_ahead: 409,
  daily_limit_reached: 409,
  weekly_limit_reached: 409,
  /** Confirming a hold that expired (and so never became bookings), or that its holder released. */
  hold_expired: 409,
  hold_released: 409,
  proposal_not_pending: 409,
  /**
   * A change-feed or event cursor older than what the log still keeps (BOOKING_EVENTS_RETENTION_DAYS):
   * the events after it are gone, so the client lists its calendar again and follows from a fresh cursor.
   */
  cursor_expired: 410,
  /** A conditional change (If-Match, expectedVersion) named a version the booking no longer has. */
  version_mismatch: 412,
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

/**
 * When a refused request may be tried again (a spent budget), and the budget itself. Services throw it
 * inside the AppError; each transport says it its own way (REST: `Retry-After` and `RateLimit-*`
 * headers; GraphQL: `extensions.retryAfterSeconds`).
 */
export interface RetryAdvice {
  readonly afterSeconds: number;
  readonly budget?: { readonly limit: number; readonly windowSeconds: number; readonly remaining: number };
}

export class AppError extends Error {
  readonly status: number;
  /** Only for `validation`: which fields were wrong. */
  readonly fields?: FieldErrors;

  constructor(
    readonly code: ErrorCode,
    message: string,
    fields?: FieldErrors,
    /** Only for `rate_limited`: when to try again, and the budget that was spent. */
    readonly retry?: RetryAdvice,
  ) {
    // Whatever a message quotes, every transport answers a bounded one (echo.ts); quote with `echo()`.
    super(boundMessage(message));
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
    if (fields) this.fields = boundFieldErrors(fields);
  }

  static validation(fields: FieldErrors): AppError {
    const [first] = Object.entries(fields);
    return new AppError('validation', first ? `${first[0]} ${first[1]}` : 'invalid input', fields);
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

/**
 * What a named PostgreSQL constraint means to a client. The database decides every such rule; each
 * module lists its constraints once, and every transport then answers a violation the same way.
 */
export type ConstraintErrors = Readonly<Record<string, { readonly code: ErrorCode; readonly message: string }>>;

const constraintErrors = new Map<string, ConstraintErrors[string]>();

/** Adds a module's constraints; a name claimed twice with another meaning is a programming error. */
export function registerConstraintErrors(table: ConstraintErrors): void {
  for (const [constraint, meaning] of Object.entries(table)) {
    const known = constraintErrors.get(constraint);
    if (known && (known.code !== meaning.code || known.message !== meaning.message)) {
      throw new Error(`constraint ${constraint} is already mapped to ${known.code}`);
    }
    constraintErrors.set(constraint, meaning);
  }
}

/** The domain error a registered constraint violation stands for, if `error` is one. */
export function constraintErrorOf(error: unknown): AppError | undefined {
  const constraint = violatedConstraint(error);
  const meaning = constraint === undefined ? undefined : constraintErrors.get(constraint);
  return meaning && new AppError(meaning.code, meaning.message);
}

/**
 * An unexpected failure, as each transport shows it: REST and MCP with seed 000's 500 body, GraphQL
 * with the `INTERNAL_SERVER_ERROR` code GraphQL clients (Apollo's convention) already know. Nothing
 * about the cause leaves; the log has it.
 */
export const INTERNAL_ERROR = {
  status: 500,
  body: { error: 'Internal Server Error' },
  graphqlCode: 'INTERNAL_SERVER_ERROR',
  message: 'Internal Server Error',
} as const;

/** Seconds a client is asked to wait before retrying an `unavailable` answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * What a transport should render for any thrown value: the AppError itself, `unavailable` when the
 * database could not answer, the registered meaning of a constraint violation (else a `conflict`), `validation`
 * for text PostgreSQL cannot store, and
 * `undefined` for everything else (a bare 500).
 */
export function toAppError(error: unknown): AppError | undefined {
  if (isAppError(error)) return error;
  if (isDatabaseUnavailable(error)) return new AppError('unavailable', 'the database is not answering; try again shortly');
  const mapped = constraintErrorOf(error);
  if (mapped) return mapped;
  if (violatedConstraint(error) !== undefined) {
    return new AppError('conflict', 'the change conflicts with existing data');
  }
  // A backstop: inputs are checked field by field, but a NUL character in any text must not be a 500.
  if (isUnstorableText(error)) return AppError.validation({ input: 'contains a character that cannot be stored (such as U+0000)' });
  return undefined;
}
