import { ApolloServer, type ApolloServerOptionsWithGateway, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { FastifyInstance } from 'fastify';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { execute, getOperationAST, GraphQLError, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Actor, ActorResolver } from '../auth/actor.js';
import { parseCredential, type PresentedCredential } from '../auth/credentials.js';
import { AppError } from '../errors.js';
import { addressKey } from '../http/client-address.js';
import type { Logger } from '../logger.js';
import { capErrors, capErrorsPlugin, formatGraphQLError } from './errors.js';
import { INPUT_RULES, storableVariablesPlugin, unstorableVariablesError } from './input-rules.js';
import type { Metrics } from '../metrics/metrics.js';
import { OperationMetrics } from './operation-metrics.js';
import { requestErrorStatusPlugin } from './request-error-status.js';
import { consistencyTokenPlugin } from './consistency-tokens.js';
import { ConnectionCounter, GRAPHQL_LIMITS } from './limits.js';
import { ConnectionOutbox } from './connection-outbox.js';
import { CompiledOperations } from './compiled-operations.js';
import { cachePolicyPlugin } from './cache-policy.js';
import { AdmissionRefusal, type CostBudget } from './cost-budget.js';
import { OperationCosts, type Charge } from './operation-costs.js';
import { graphqlHttpHandler, type TrustedDocumentsPolicy } from './http-handler.js';
import { documentStoreWith, persistedQueryStoreWith } from './trusted-documents.js';
import { registerGraphQLOverSse, type ResumableSubscription } from './sse.js';
import { subscribeSharingExecution, type PushTarget } from './shared-execution.js';
import { sharedPayloadReplacer } from './shared-payloads.js';
import { ValidatedDocuments } from './validated-documents.js';
import { executedAlready } from './handed-over.js';
import { HttpFastPath } from './http-fast-path.js';
import { platformContextOf } from './http-context.js';

/** What every resolver can rely on; modules extend it with their loaders. */
export interface PlatformContext extends BaseContext {
  readonly requestId: string;
  /** The graphql-ws connection the operation arrived on (undefined over HTTP): live events group their subscribers by it. */
  readonly connectionId: string | undefined;
  readonly credential: PresentedCredential;
  /** Who is calling: resolved once per HTTP request or WebSocket connection, on first use. */
  readonly actor: () => Promise<Actor>;
  readonly log: Logger;
  /** A request header (HTTP) or connection parameter (WebSocket), by lower-case name. */
  header(name: string): string | undefined;
  /** The client's address (rate limits). */
  readonly ip: string;
}

export interface GraphQLServerOptions<Context extends PlatformContext> {
  schema: GraphQLSchema;
  /** Adds the modules' per-request parts (dataloaders) to the platform context. */
  buildContext: (base: PlatformContext) => Context;
  /** Turns a WebSocket connection's credential into its actor (HTTP requests carry theirs). */
  actors: ActorResolver;
  /** Runs one operation in its own unit of work (an EntityManager fork). */
  runInScope: <T>(operation: () => T) => T;
  logger: Logger;
  /** The client's address of a WebSocket upgrade (behind trusted proxies, the forwarded one). */
  clientAddress: (request: IncomingMessage) => string;
  /** Where operation latencies and open subscriptions are reported. */
  metrics: Metrics;
  /** The request of an operation on which graphql-jit compiles it (GRAPHQL_JIT: 2 by default); 0: never. */
  compileOperationsAfter: number;
  /** Whether a POSTed query whose text is known is answered without Apollo's pipeline (http-fast-path.ts; GRAPHQL_HTTP_DIRECT). */
  directHttpAnswers: boolean;
  /** The callers' GraphQL cost budgets (GRAPHQL_COST_PER_MIN; 0: not enforced), kept in PostgreSQL and charged in the process. */
  costBudget: CostBudget;
  /** Subscriptions whose events GraphQL over SSE resumes from `Last-Event-ID` (the modules name them). */
  resumableSubscriptions: readonly ResumableSubscription[];
  /** The documents the build published, and who may send only those (GRAPHQL_TRUSTED_DOCUMENTS_ONLY). */
  trustedDocuments: TrustedDocumentsPolicy;
  path?: string;
}

export const GRAPHQL_PATH = '/graphql';

/**
 * A socket's errors go to our logger. graphql-ws prints them with `console.error` (past the logger and
 * its redaction) and closes with 1011; `ws` has already closed the socket with the right code (1009 for
 * a message over the limit, 1002 for a protocol error) and emits 'close' next, which graphql-ws cleans
 * up on.
 */
function logSocketErrors(ws: WebSocket, log: Logger): void {
  const emit = ws.emit.bind(ws) as (event: string | symbol, ...args: unknown[]) => boolean;
  ws.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== 'error') return emit(event, ...args);
    log.debug({ err: args[0] }, 'WebSocket error; the socket is closed');
    return true;
  }) as WebSocket['emit'];
}

/** The credential a WebSocket client presents in `connectionParams` (the same names as the HTTP headers). */
function connectionCredential(params: Record<string, unknown>): PresentedCredential {
  return parseCredential(params.authorization ?? params.Authorization, params['x-api-key'] ?? params['X-API-Key']);
}

/** Subscribers with the same credential see the same data, so they may share an execution. */
function viewerKey(contextValue: unknown): string {
  const credential = (contextValue as PlatformContext).credential;
  return credential.kind === 'token' ? `token:${credential.token}` : credential.kind;
}

/**
 * Apollo Server's documented way to replace execution: a gateway whose `load` hands it an executor.
 * Apollo keeps the request pipeline (parse, validation rules, the document cache, plugins, error
 * formatting) and calls the executor with the validated document.
 */
function compiledExecution(schema: GraphQLSchema, operations: CompiledOperations): ApolloServerOptionsWithGateway<BaseContext>['gateway'] {
  return {
    onSchemaLoadOrUpdate: (callback) => {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    load: async () => ({
      // A request GraphQL over HTTP's direct path handed over having run it already: its result, not a second run.
      executor: async (requestContext) =>
        executedAlready(requestContext.context) ??
        operations.execute({
          documentKey: requestContext.queryHash,
          document: requestContext.document,
          operationName: requestContext.request.operationName,
          operation: requestContext.operation,
          contextValue: requestContext.context,
          variableValues: requestContext.request.variables,
        }),
    }),
    stop: async () => undefined,
  };
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

  // Operations a client can afford (limits.ts): tokens bounded at parse, depth, aliases and cost by
  // graphql-armor's validation rules, over HTTP and WebSocket alike. Field suggestions stay on: frontend
  // teams rely on them. Armor's own token limit stays off (its plugin turns a syntax error into a 500);
  // graphql-js's parser enforces the same bound itself.
  const armor = new ApolloArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    maxTokens: { enabled: false },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  const validationRules = [...armor.validationRules, ...INPUT_RULES];
  const rules = [...specifiedRules, ...validationRules];
  // Validation stops at the cap, with graphql-js's own note as the last error.
  const validationOptions = { maxErrors: GRAPHQL_LIMITS.maxErrorsPerAnswer - 1 };
  const executions = options.metrics.counter(
    'gateway_graphql_executions_total',
    'GraphQL queries and mutations over HTTP by how they ran: compiled (graphql-jit) or interpreted (graphql-js: before an operation is compiled, what cannot be, and variables that do not coerce)',
    ['engine'],
  );
  const costs = new OperationCosts(options.schema, options.costBudget);
  const operations = new CompiledOperations(options.schema, {
    compileAfterSeen: options.compileOperationsAfter || Number.POSITIVE_INFINITY,
    executions: { compiled: executions.series({ engine: 'compiled' }), interpreted: executions.series({ engine: 'interpreted' }) },
    leafRepairs: options.metrics
      .counter(
        'gateway_graphql_leaf_repairs_total',
        "Compiled query answers whose built-in scalar or enum leaves were serialised after the check: one was not in its serialised form (a resolver gave a number for an ID, say)",
        [],
      )
      .series({}),
  });
  // Trusted documents are parsed (on load), validated and compiled once, here; one that does not validate
  // (a test's document made to exceed a limit) stays out, and Apollo refuses it as it refuses any other.
  const validated = new Map<string, DocumentNode>();
  for (const trusted of options.trustedDocuments.documents) {
    if (validate(options.schema, trusted.document, rules).length > 0) continue;
    validated.set(trusted.hash, trusted.document);
    const named = trusted.document.definitions.flatMap((definition) =>
      definition.kind === 'OperationDefinition' && definition.operation !== 'subscription' ? [definition.name?.value] : [],
    );
    for (const name of named) operations.prepare(trusted.hash, trusted.document, name);
    if (named.length === 1) operations.prepare(trusted.hash, trusted.document, undefined);
  }
  log.info({ trusted: options.trustedDocuments.documents.size, validated: validated.size, onlyFor: [...options.trustedDocuments.requiredFor] }, 'trusted GraphQL documents loaded');
  const validatedTexts = new ValidatedDocuments(options.schema, rules, validationOptions);
  // Every plugin with request hooks, in Apollo's order: Apollo runs them, and so does the direct path.
  // Apollo's cache-control plugin reads hints in graphql-js's per-field hooks, which compiled operations
  // never call: cachePolicyPlugin reads the same `@cacheControl` hints from the document instead.
  const requestPlugins = [
    storableVariablesPlugin<Context>(),
    capErrorsPlugin<Context>(),
    cachePolicyPlugin<Context>(options.schema),
    costs.plugin<Context>(),
    requestErrorStatusPlugin<Context>(),
    new OperationMetrics(options.metrics).plugin<Context>(),
    consistencyTokenPlugin<Context>(),
  ];
  const answers = options.metrics.counter(
    'gateway_graphql_http_answers_total',
    'GraphQL operations over HTTP by who answered them: the direct path (a known query text: the same plugins, cost and executor without Apollo Server\'s pipeline) or Apollo Server',
    ['by'],
  );
  const fastPath = new HttpFastPath<Context>({
    schema: options.schema,
    plugins: requestPlugins,
    costs,
    operations,
    answers: { direct: answers.series({ by: 'direct' }), apollo: answers.series({ by: 'apollo' }) },
  });
  for (const trusted of options.trustedDocuments.documents) {
    const document = validated.get(trusted.hash);
    if (document) fastPath.trust(trusted.text, document, trusted.hash);
  }
  const apollo = new ApolloServer<Context>({
    // Apollo parses, validates (armor's rules included) and runs every plugin as before; only execution is ours.
    gateway: compiledExecution(options.schema, operations),
    includeStacktraceInErrorResponses: false,
    // Explicit, so that NODE_ENV (production under `npm start`) changes nothing here: frontend teams
    // generate their types from introspection.
    introspection: true,
    allowBatchedHttpRequests: false,
    // Apollo's CSRF guard refuses a GET without a preflight header. It protects ambient credentials
    // (cookies, HTTP authentication the browser repeats), and there are none here: a credential is
    // only ever a Bearer token or X-API-Key header, which a cross-site page cannot add without a
    // preflight. Mutations still need a POST with a JSON body (a GET mutation is a 405, and a form or
    // text/plain POST never reaches execution), so a cross-site page can do only what an anonymous
    // client can do on its own. docs/graphql.md: "GraphQL over HTTP".
    csrfPrevention: false,
    parseOptions: { maxTokens: GRAPHQL_LIMITS.maxTokens },
    validationRules,
    validationOptions,
    documentStore: documentStoreWith(validated),
    persistedQueries: { cache: persistedQueryStoreWith(options.trustedDocuments.documents) },
    formatError: (formatted, error) => formatGraphQLError(formatted, error, log),
    plugins: [
      fastifyApolloDrainPlugin(app),
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      // Apollo installs inline tracing (federated subgraphs' `ftv1`) unless told not to; this schema is no subgraph.
      ApolloServerPluginInlineTraceDisabled(),
      ...requestPlugins,
      fastPath.learning,
    ],
  });
  await apollo.start();
  // The direct path runs requestPlugins only: any other plugin with request hooks (Apollo installs some
  // of its own with some settings, e.g. usage reporting with APOLLO_KEY) leaves every request to Apollo.
  const installed = (apollo as unknown as { internals?: { plugins?: readonly ApolloServerPlugin<Context>[] } }).internals?.plugins;
  const direct = options.directHttpAnswers && installed !== undefined && installed.every((plugin) => !plugin.requestDidStart || requestPlugins.includes(plugin) || plugin === fastPath.learning);
  if (options.directHttpAnswers && !direct) log.warn('GraphQL over HTTP: every request through Apollo Server (a plugin the direct path does not run is installed)');

  app.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: path,
    schema: { hide: true },
    config: { errorStyle: 'graphql' },
    handler: graphqlHttpHandler(apollo, {
      trusted: options.trustedDocuments,
      log,
      context: async (request) => options.buildContext(platformContextOf(request)),
      ...(direct ? { fastPath } : {}),
    }),
  });

  const sockets = new WebSocketServer({ noServer: true, maxPayload: GRAPHQL_LIMITS.maxMessageBytes });
  // A client's WebSockets and SSE streams count together.
  const socketsPerAddress = new ConnectionCounter(GRAPHQL_LIMITS.maxSocketsPerAddress);
  const socketsPerCredential = new ConnectionCounter(GRAPHQL_LIMITS.maxSocketsPerCredential);
  let connectionCounter = 0;
  // The connection contexts, not their `subscriptions`: graphql-ws swaps that object when a socket closes.
  const openConnections = new Set<{ readonly subscriptions: Readonly<Record<string, unknown>> }>();
  options.metrics.gauge('gateway_graphql_subscriptions_open', 'Operations open over graphql-ws: subscriptions, and queries still running', [], (set) => {
    let open = 0;
    for (const connection of openConnections) open += Object.keys(connection.subscriptions).length;
    set(open);
  });
  options.metrics.gauge('gateway_graphql_ws_connections_open', 'graphql-ws connections past their connection_init', [], (set) => set(openConnections.size));
  /** A `next` payload as clients get it: errors formatted (and logged) as over HTTP. */
  const nextPayload = (result: { data?: unknown; errors?: readonly GraphQLError[] | undefined }): object =>
    result.errors
      ? { ...(result.data !== undefined ? { data: result.data } : {}), errors: capErrors(result.errors.map((error) => formatGraphQLError(error.toJSON(), error, log))) }
      : result;
  const outboxes = new WeakMap<WebSocket, ConnectionOutbox>();
  /** Per connection, the operations charged and not yet answered. */
  const charges = new WeakMap<object, Map<string, Charge>>();
  const chargesOf = (ctx: object): Map<string, Charge> => {
    let known = charges.get(ctx);
    if (!known) charges.set(ctx, (known = new Map()));
    return known;
  };
  /** Per operation context: where its pushed subscription events go. */
  const pushTargets = new WeakMap<object, PushTarget>();
  const wsServer = useServer<Record<string, unknown> | undefined, { connectionId: string; credentialKey?: string | undefined; actor: () => Promise<Actor> }>(
    {
      schema: options.schema,
      jsonMessageReplacer: sharedPayloadReplacer,
      connectionInitWaitTimeout: GRAPHQL_LIMITS.connectionInitWaitMs,
      onConnect: (ctx) => {
        ctx.extra.connectionId = `ws-${++connectionCounter}`;
        openConnections.add(ctx);
        const credential = connectionCredential(ctx.connectionParams ?? {});
        ctx.extra.actor = options.actors.once(credential);
        if (credential.kind !== 'token') return true;
        if (!socketsPerCredential.acquire(credential.token)) {
          ctx.extra.socket.close(1008, `more than ${GRAPHQL_LIMITS.maxSocketsPerCredential} connections with this credential`);
          return false;
        }
        ctx.extra.credentialKey = credential.token;
        return true;
      },
      onClose: (ctx) => {
        openConnections.delete(ctx);
        if (ctx.extra.credentialKey !== undefined) socketsPerCredential.release(ctx.extra.credentialKey);
        ctx.extra.credentialKey = undefined;
      },
      // Parsed and validated here rather than by graphql-ws, so that a syntax error or a document over
      // the token bound is an error for that operation, not a closed socket and a console line.
      onSubscribe: async (ctx, id, payload) => {
        if (Object.keys(ctx.subscriptions).length > GRAPHQL_LIMITS.maxOperationsPerSocket) {
          const refusal = new AppError('limit_exceeded', `more than ${GRAPHQL_LIMITS.maxOperationsPerSocket} operations at once on one connection`);
          return [new GraphQLError(refusal.message, { originalError: refusal })];
        }
        // graphql-ws carries only text: trusted when it is a trusted document's, however printed.
        const { documents, requiredFor } = options.trustedDocuments;
        const actor = ctx.extra.actor ?? options.actors.once(connectionCredential(ctx.connectionParams ?? {}));
        if (requiredFor.size > 0 && requiredFor.has((await actor()).kind) && !documents.matching(payload.query)) {
          const refusal = new AppError('trusted_document_required', 'this server runs only trusted documents for this caller: send the text of a document the build published');
          return [new GraphQLError(refusal.message, { originalError: refusal })];
        }
        const prepared = validatedTexts.prepare(payload.query);
        if ('errors' in prepared) return prepared.errors;
        const document = prepared.document;
        const refusal = unstorableVariablesError(payload.variables);
        if (refusal) return [refusal];
        const operation = getOperationAST(document, payload.operationName);
        if (operation) {
          const payer = { actor, credential: connectionCredential(ctx.connectionParams ?? {}), ip: options.clientAddress(ctx.extra.request) };
          try {
            chargesOf(ctx).set(id, await costs.admit(payer, document, operation, payload.variables ?? undefined));
          } catch (error) {
            if (error instanceof AdmissionRefusal) return [new GraphQLError(error.message, { originalError: error })];
            throw error;
          }
        }
        return {
          schema: options.schema,
          document,
          ...(payload.operationName != null ? { operationName: payload.operationName } : {}),
          ...(payload.variables != null ? { variableValues: payload.variables } : {}),
        };
      },
      context: (ctx, id) => {
        const params = ctx.connectionParams ?? {};
        const context = options.buildContext({
          requestId: `${ctx.extra.connectionId}:${id}`,
          connectionId: ctx.extra.connectionId,
          credential: connectionCredential(params),
          // Set when the connection was acknowledged, which comes before any operation.
          actor: ctx.extra.actor ?? options.actors.once(connectionCredential(params)),
          log: log.child({ connectionId: ctx.extra.connectionId, operationId: id }),
          ip: options.clientAddress(ctx.extra.request),
          header: (name) => {
            const value = params[name];
            return typeof value === 'string' ? value : undefined;
          },
        });
        const outbox = outboxes.get(ctx.extra.socket);
        if (outbox) {
          const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
          pushTargets.set(context, { next: (payloadJson) => outbox.sendJoined(prefix, payloadJson, '}'), keepingUp: () => outbox.keepingUp() });
        }
        return context;
      },
      execute: (args: ExecutionArgs) => options.runInScope(() => execute(args)),
      subscribe: (args: ExecutionArgs) =>
        options.runInScope(() =>
          subscribeSharingExecution(args, { viewerKey, payloadOf: nextPayload, pushTarget: pushTargets.get(args.contextValue as object), runInScope: options.runInScope }),
        ),
      onNext: (ctx, id, _payload, _args, result) => {
        // A query or mutation answers once, with its cost; a subscription's events carry none (and stay shared).
        const charge = chargesOf(ctx).get(id);
        if (!charge || charge.operation.operation === 'subscription') return result.errors ? nextPayload(result) : undefined;
        return { ...nextPayload(result), extensions: { ...result.extensions, cost: costs.settle(charge, result.data) } };
      },
      onComplete: (ctx, id) => void chargesOf(ctx).delete(id),
      onError: (_ctx, _id, _payload, errors) =>
        capErrors(errors.map((error) => formatGraphQLError(error.toJSON(), error, log))),
    },
    sockets,
  );

  app.server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== path) {
      socket.destroy();
      return;
    }
    const address = addressKey(options.clientAddress(request));
    if (!socketsPerAddress.acquire(address)) {
      socket.end(`HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    // The TCP socket, not the WebSocket: a handshake that fails never becomes one but still closes.
    socket.once('close', () => socketsPerAddress.release(address));
    sockets.handleUpgrade(request, socket, head, (ws) => {
      outboxes.set(ws, new ConnectionOutbox(ws, socket, GRAPHQL_LIMITS.maxUnsentBytesPerSocket));
      logSocketErrors(ws, log);
      sockets.emit('connection', ws, request);
    });
  });

  registerGraphQLOverSse(app, {
    schema: options.schema,
    rules,
    buildContext: options.buildContext,
    runInScope: options.runInScope,
    trusted: options.trustedDocuments,
    costs,
    connectionsPerAddress: socketsPerAddress,
    connectionsPerCredential: socketsPerCredential,
    resumable: options.resumableSubscriptions,
    payloadOf: (result) => nextPayload(result) as ExecutionResult,
    viewerKey,
    log,
  });

  // On shutdown: tell every subscriber we are going away, then stop accepting sockets.
  app.addHook('preClose', async () => {
    await wsServer.dispose();
    for (const client of sockets.clients) client.close(1001, 'server shutting down');
    await new Promise<void>((resolve) => sockets.close(() => resolve()));
  });
}
