import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build:web` put the pages, seen from the compiled server (dist/) or the sources (src/). */
function findWebDist(): string | undefined {
  return [resolve(import.meta.dirname, '../../../web'), resolve(import.meta.dirname, '../../../dist/web')].find((dir) =>
    existsSync(resolve(dir, 'index.html')),
  );
}

// The pages talk to this server only; the policy makes the browser enforce it.
const PAGE_POLICY = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The agent console's policy: the same origin only, and no inline style at all (the explorer's editor
 * needs 'unsafe-inline' for its styles; the console sets positions through the CSSOM, which CSP
 * leaves alone). `connect-src 'self'` covers its WebSocket: CSP Level 3 matches ws: and wss: to the
 * page's own host and port under 'self'.
 */
const CONSOLE_POLICY = PAGE_POLICY.replace("style-src 'self' 'unsafe-inline'", "style-src 'self'");

/**
 * Serves the built front end: `/` (the front page: what this is, every page and document, the server's
 * version and health), `/browse` (the tool directory), `/console` (an agent's console) and, when enabled, the GraphQL explorer
 * for a browser opening `/graphql`. Hashed assets live under `/assets/` and are cached for good.
 */
export async function registerWebPages(app: FastifyInstance, options: { explorer: boolean }): Promise<void> {
  const root = findWebDist();
  const sendPage = (file: string, policy = PAGE_POLICY) => async (_request: unknown, reply: FastifyReply) => {
    if (!root) return reply.code(503).type('text/plain').send('The web pages are not built: run `npm run build`.');
    return reply.header('content-security-policy', policy).header('cache-control', 'no-cache').sendFile(file, root, { cacheControl: false });
  };

  if (root) {
    await app.register(fastifyStatic, {
      root: resolve(root, 'assets'),
      prefix: '/assets/',
      immutable: true,
      maxAge: '365d',
      index: false,
    });
  } else {
    app.log.warn('web pages are not built; /browse answers 503 until `npm run build`');
  }

  app.get('/', { schema: { hide: true } }, sendPage('index.html'));
  app.get('/browse', { schema: { hide: true } }, sendPage('browse.html'));
  app.get('/console', { schema: { hide: true } }, sendPage('console.html', CONSOLE_POLICY));
  app.get('/prices', { schema: { hide: true } }, sendPage('prices.html'));

  // Browsers ask for /favicon.ico on any page, JSON answers included; the pages link the SVG.
  for (const icon of ['favicon.ico', 'favicon.svg']) {
    app.get(`/${icon}`, { schema: { hide: true } }, async (_request, reply) => {
      if (!root) return reply.code(404).type('text/plain').send('The web pages are not built: run `npm run build`.');
      return reply.header('cache-control', 'public, max-age=86400').sendFile(icon, root, { cacheControl: false });
    });
  }

  if (options.explorer) {
    // A browser navigating to /graphql gets the explorer; API clients (JSON, GET with ?query=) go on to Apollo.
    app.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET' || request.url.split('?')[0] !== '/graphql') return;
      if (request.url.includes('?') || !String(request.headers.accept ?? '').includes('text/html')) return;
      if (!root) return reply.code(503).type('text/plain').send('The web pages are not built: run `npm run build`.');
      return reply.header('content-security-policy', PAGE_POLICY).header('cache-control', 'no-cache').sendFile('explorer.html', root, { cacheControl: false });
    });
  }
}
