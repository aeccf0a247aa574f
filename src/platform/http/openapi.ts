import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/**
 * The credentials a route may ask for, as OpenAPI security requirements. Alternatives sit side by
 * side in one list (either header works); `{}` in a list makes the credential optional.
 */
export const SECURITY = {
  /** An agent's `public_token`, as `Authorization: Bearer` or `X-API-Key` (one, not both). */
  agent: [{ agentToken: [] }, { agentApiKey: [] }],
  /** Bootstrap claims the first agent without a credential; every later agent needs one. */
  agentOrNone: [{}, { agentToken: [] }, { agentApiKey: [] }],
  /** The directory's 7-day JWT from `POST /api/auth/verify`. */
  directoryUser: [{ directoryJwt: [] }],
  /** Directory reads work without a token; with one they get the signed-in rate limit. */
  directoryUserOrNone: [{}, { directoryJwt: [] }],
  admin: [{ adminToken: [] }],
  public: [],
} as const;

/**
 * Describes every REST route from its own schemas (OpenAPI 3.1). Must be registered before the
 * routes so it sees them; `/openapi.json` asks @fastify/swagger for the document on each request.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent gateway REST API',
        version: '1.0.0',
        description:
          'Scheduling, tool directory, GPU prices, status and token analytics. GraphQL lives at /graphql. ' +
          'No text may hold U+0000 (NUL), which nothing here can store: a JSON body holding one is refused whole (400 naming `body`), a query parameter 400 naming it.',
        // Each installation serves its own document (see `servers`), so whoever runs it is the one to ask;
        // its front page at / names the version and health. No licence: the project grants none.
        contact: { name: 'The operators of the gateway that served this document' },
      },
      // Relative: every installation serves its own document, so paths resolve against wherever it was read from.
      servers: [{ url: '/', description: 'The gateway that served this document' }],
      tags: [
        { name: 'scheduling', description: 'Agents, bookings and slot-transfer proposals (seed 000)' },
        { name: 'webhooks', description: 'Signed webhooks for an agent’s booking events' },
        { name: 'calendar feeds', description: 'Read-only iCalendar feeds of an agent’s bookings, each with its own token' },
        { name: 'holds', description: 'Slots reserved on one or several calendars for a few minutes, then confirmed into bookings or released' },
        { name: 'availability', description: 'Free slots common to several agents’ calendars, and who may ask for an agent’s' },
        { name: 'directory', description: 'The tool directory (seed 001)' },
        { name: 'accounts', description: 'Directory sign-in by e-mail (magic link, then a JWT)' },
        { name: 'prices', description: 'The open GPU price feed (seed 002)' },
        { name: 'status', description: 'The status report (seed 002)' },
        { name: 'tokens', description: 'Token analytics and safety from DEX pairs (seed 002)' },
        { name: 'health', description: 'Liveness and readiness probes' },
      ],
      components: {
        securitySchemes: {
          agentToken: { type: 'http', scheme: 'bearer', description: 'An agent’s public_token (agt_…) from POST /api/agents.' },
          agentApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The same agent public_token; send this or Authorization, not both.' },
          directoryJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The 7-day token from POST /api/auth/verify.' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN the gateway was started with.' },
        },
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
