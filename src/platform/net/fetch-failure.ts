/**
 * A short reason for a failed `fetch`, for logs and the status report: undici reports every network
 * failure as "fetch failed" and keeps the useful part (ECONNREFUSED, ECONNRESET, a parse error) in
 * `cause.code`. Read by shape, not `instanceof`: AbortSignal.timeout rejects with a DOMException, and
 * errors from another realm (a vm context) are no instance of this one's Error.
 */
export function describeFetchFailure(error: unknown, timeoutMs: number): string {
  const failure = (error ?? {}) as { name?: unknown; message?: unknown; cause?: { code?: unknown } };
  if (failure.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const code = failure.cause?.code;
  if (typeof code === 'string') return `could not connect or read its answer (${code})`;
  return typeof failure.message === 'string' ? failure.message : String(error);
}
