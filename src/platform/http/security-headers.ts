import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Helmet's response headers on every answer (API, pages, errors): `X-Content-Type-Options: nosniff`,
 * `Referrer-Policy: no-referrer`, `X-Frame-Options`, `Strict-Transport-Security`, the cross-origin
 * isolation headers, and the rest of its defaults.
 *
 * Its Content-Security-Policy is left off: each page sets its own, stricter than a site-wide default
 * could be (web-pages.ts), and a JSON answer is never rendered. Cross-Origin-Resource-Policy stays
 * `same-origin` except where a route opts out (the open price feed).
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, { global: true, contentSecurityPolicy: false });
}
