/**
 * The bounds shared across the scheduling API, once: services check them, and the REST schemas, the
 * GraphQL descriptions, the MCP tool schemas and the entity column lengths are written from them.
 * Bounds of one operation only live with its service (`BOOKING_LIMITS`, `AGENT_LIMITS`, …) and take
 * these values from here.
 */
export const SCHEDULING_LIMITS = {
  /** `Idempotency-Key` headers and `idempotency_key` fields, on every operation that takes one. */
  idempotencyKeyMaxLength: 255,
  /** Agent ids named in a request body (`agentId`, `targetAgentId`). */
  agentIdMaxLength: 128,
  /** Lists: the page size when none is asked for, and the most one page holds. */
  pageDefault: 50,
  pageMax: 200,
} as const;

/** The `Idempotency-Key` request header, as every REST operation that takes one declares it. */
export const IDEMPOTENCY_KEY_HEADER = {
  type: 'string',
  minLength: 1,
  maxLength: SCHEDULING_LIMITS.idempotencyKeyMaxLength,
} as const;
