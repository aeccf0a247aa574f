import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

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
        description: 'Scheduling, tool directory, GPU prices, status and token analytics. GraphQL lives at /graphql.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
