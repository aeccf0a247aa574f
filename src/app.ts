import { randomUUID } from 'node:crypto';
import { RequestContext } from '@mikro-orm/core';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { createSchedulingModule, resolverClasses, type SchedulingContext } from './modules/index.js';
import { systemClock, type Clock } from './platform/clock.js';
import type { Orm } from './platform/db/orm.js';
import { buildGatewaySchema, resolverContainer } from './platform/graphql/schema.js';
import { registerGraphQL } from './platform/graphql/server.js';
import { installCredentialParsing } from './platform/http/credential.js';
import { installErrorHandlers } from './platform/http/errors.js';
import { registerHealthRoutes } from './platform/http/health.js';
import { registerOpenApi } from './platform/http/openapi.js';
import { compileValidator } from './platform/http/validation.js';
import type { Logger } from './platform/logger.js';

export interface AppDeps {
  config: Config;
  orm: Orm;
  logger: Logger;
  clock?: Clock;
}

const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/;

/** Builds the whole gateway on one Fastify instance, ready but not listening (tests `inject` into it). */
export async function buildApp({ config, orm, logger, clock = systemClock }: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.setValidatorCompiler(compileValidator);
  installErrorHandlers(app);
  installCredentialParsing(app);
  // One unit of work per request: every service call in it sees the same EntityManager fork.
  app.addHook('onRequest', (_request, _reply, done) => RequestContext.create(orm.em, done));
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await registerOpenApi(app);
  registerHealthRoutes(app, async () => {
    await orm.em.getConnection().execute('select 1');
  });

  const scheduling = createSchedulingModule({ em: orm.em, clock, bookingCap: config.bookingCap });
  scheduling.registerRoutes(app);

  const schema = await buildGatewaySchema({
    resolvers: resolverClasses,
    container: resolverContainer([...scheduling.resolvers]),
  });
  await registerGraphQL<SchedulingContext>(app, {
    schema,
    logger,
    runInScope: (operation) => RequestContext.create(orm.em, operation),
    buildContext: (base) => ({ ...base, scheduling: scheduling.createLoaders() }),
  });

  await app.ready();
  return app;
}
