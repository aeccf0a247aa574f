/** Span attributes of the gateway's own. Imports nothing, so tracing.ts and start-tracing.ts can share it without an import circle. */

/** Span attribute carrying Fastify's request id (the `x-request-id` response header). */
export const REQUEST_ID_ATTRIBUTE = 'gateway.request_id';
