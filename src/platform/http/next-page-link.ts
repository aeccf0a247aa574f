import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Paged REST lists keep their body exactly `{items}` (strict clients validate the seeds' shapes) and
 * say that more exist with an RFC 8288 `Link: <…>; rel="next"` header. Its target is the same request
 * (path and every query parameter as the server read it, defaults included) with `after` set to the
 * cursor of the page's last item; the last page carries no `Link`. The target is a path-absolute
 * reference, which RFC 8288 §3.1 resolves against the URL that was requested, so it holds behind any
 * host name or scheme the client used.
 */
export function setNextPageLink(request: FastifyRequest, reply: FastifyReply, cursor: string | null): void {
  if (cursor === null) return;
  const path = request.url.split('?')[0]!;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (name !== 'after' && value !== undefined) query.set(name, String(value));
  }
  query.set('after', cursor);
  reply.header('link', `<${path}?${query}>; rel="next"`);
}

/** The `after` query parameter of a paged list. */
export const AFTER_QUERY_PARAMETER = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'Where the page starts: the `after` of the previous page’s `Link: <…>; rel="next"` (opaque).',
} as const;

/** The response header of a paged list, for its OpenAPI description. */
export const NEXT_PAGE_LINK_HEADER = {
  Link: {
    type: 'string',
    description:
      'RFC 8288 `<…>; rel="next"` when more items follow: the URL (relative to this request’s) of the next page, the same query with `after` set. ' +
      'Absent on the last page.',
  },
} as const;
