import { ApolloServer, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin, fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyInstance } from 'fastify';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { execute, specifiedRules, validate, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseCredential, type PresentedCredential } from '../auth/credentials.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import { formatGraphQLError } from './errors.js';
import { subscribeSharingExecution } from './shared-execution.js';
import { sharedPayloadReplacer, withSharedPayload } from './shared-payloads.js';

/** What every resolver can rely on; modules extend it with their loaders. */
export interface PlatformContext extends BaseContext {
  readonly requestId: string;
  readonly credential: PresentedCredential;
  readonly log: Logger;
  /** This operation's unit of work: the request's fork over HTTP, a fresh fork per WebSocket operation. */
  readonly em: EntityManager;
  /** A request header (HTTP) or connection parameter (WebSocket), by lower-case name. */
  header(name: string): string | undefined;
  /** The client's address (rate limits). */
  readonly ip: string;
}

export interface GraphQLServerOptions<Context extends PlatformContext> {
  schema: GraphQLSchema;
  /** Adds the modules' per-request parts (dataloaders) to the platform context. */
  buildContext: (base: PlatformContext) => Context;
  /** Runs one operation in its own unit of work (an EntityManager fork). */
  runInScope: <T>(operation: () => T) => T;
  /** The current request's EntityManager, or a new fork where no request scope is active. */
  entityManager: () => EntityManager;
  logger: Logger;
  path?: string;
}

export const GRAPHQL_PATH = '/graphql';

/**
 * Messages sent to one socket in the same tick leave in one write: an event reaches every
 * subscription on a connection at once, and a write per message costs a system call each. A shared
 * subscription payload set aside while the message was made goes back in here (shared-payloads.ts).
 */
function coalesceWrites(ws: WebSocket, socket: Duplex): void {
  const send = ws.send.bind(ws) as (...args: unknown[]) => void;
  let corked = false;
  ws.send = ((data: unknown, ...rest: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    send(typeof data === 'string' ? withSharedPayload(data) : data, ...rest);
  }) as WebSocket['send'];
}

/** Subscribers with the same credential see the same data, so they may share an execution. */
function viewerKey(contextValue: unknown): string {
  const credential = (contextValue as PlatformContext).credential;
  return credential.kind === 'token' ? `token:${credential.token}` : credential.kind;
}

/**
 * Serves the schema at one path: GraphQL over HTTP (POST and GET) through Apollo Server, and
 * GraphQL over WebSocket (`graphql-ws`) on the same path and port. Over WebSocket the credential
 * comes in `connectionParams` as `authorization` or `x-api-key`.
 */
export async function registerGraphQL<Context extends PlatformContext>(
  app: FastifyInstance,
  options: GraphQLServerOptions<Context>,
): Promise<void> {
  const path = options.path ?? GRAPHQL_PATH;
  const log = options.logger.child({ component: 'graphql' });

  // Operations a client can afford: depth, aliases and cost are bounded (graphql-armor validation
  // rules), over HTTP and WebSocket alike. Field suggestions stay on: frontend teams rely on them. The
  // token limit is off: its plugin turns a syntax error into a 500; the 1 MiB body limit bounds parsing.
  const armor = new ApolloArmor({
    maxDepth: { n: 10, ignoreIntrospection: true },
    maxAliases: { n: 15 },
    maxTokens: { enabled: false },
    costLimit: { maxCost: 5000 },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  const apollo = new ApolloServer<Context>({
    schema: options.schema,
    includeStacktraceInErrorResponses: false,
    // Explicit, so that NODE_ENV (production under `npm start`) changes nothing here: frontend teams
    // generate their types from introspection.
    introspection: true,
    allowBatchedHttpRequests: false,
    validationRules: armor.validationRules,
    formatError: (formatted, error) => formatGraphQLError(formatted, error, log),
    // No cache hints are set anywhere: the cache-control plugin would only walk every field for nothing.
    plugins: [fastifyApolloDrainPlugin(app), ApolloServerPluginLandingPageDisabled(), ApolloServerPluginCacheControlDisabled()],
  });
  await apollo.start();

  app.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: path,
    schema: { hide: true },
    handler: fastifyApolloHandler(apollo, {
      context: async (request) =>
        options.buildContext({
          requestId: request.id,
          credential: parseCredential(request.headers.authorization, request.headers['x-api-key']),
          log: request.log,
          em: options.entityManager(),
          ip: request.ip,
          header: (name) => {
            const value = request.headers[name];
            return typeof value === 'string' ? value : undefined;
          },
        }),
    }),
  });

  const sockets = new WebSocketServer({ noServer: true });
  let connectionCounter = 0;
  const wsServer = useServer<Record<string, unknown> | undefined, { connectionId: string }>(
    {
      schema: options.schema,
      jsonMessageReplacer: sharedPayloadReplacer,
      validate: (schema, document) => validate(schema, document, [...specifiedRules, ...armor.validationRules]),
      onConnect: (ctx) => {
        ctx.extra.connectionId = `ws-${++connectionCounter}`;
        return true;
      },
      context: (ctx, id) => {
        const params = ctx.connectionParams ?? {};
        return options.buildContext({
          requestId: `${ctx.extra.connectionId}:${id}`,
          credential: parseCredential(params.authorization ?? params.Authorization, params['x-api-key'] ?? params['X-API-Key']),
          log: log.child({ connectionId: ctx.extra.connectionId, operationId: id }),
          em: options.entityManager(),
          ip: ctx.extra.request.socket.remoteAddress ?? 'unknown',
          header: (name) => {
            const value = params[name];
            return typeof value === 'string' ? value : undefined;
          },
        });
      },
      execute: (args: ExecutionArgs) => options.runInScope(() => execute(args)),
      subscribe: (args: ExecutionArgs) => options.runInScope(() => subscribeSharingExecution(args, viewerKey)),
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors) return undefined;
        return {
          ...(result.data !== undefined ? { data: result.data } : {}),
          errors: result.errors.map((error) => formatGraphQLError(error.toJSON(), error, log)),
        };
      },
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((error) => formatGraphQLError(error.toJSON(), error, log)),
    },
    sockets,
  );

  app.server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== path) {
      socket.destroy();
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      coalesceWrites(ws, socket);
      sockets.emit('connection', ws, request);
    });
  });

  // On shutdown: tell every subscriber we are going away, then stop accepting sockets.
  app.addHook('preClose', async () => {
    await wsServer.dispose();
    for (const client of sockets.clients) client.close(1001, 'server shutting down');
    await new Promise<void>((resolve) => sockets.close(() => resolve()));
  });
}
