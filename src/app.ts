import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import pg from 'pg';
import {
  createAgentsModule,
  createAvailabilityModule,
  BOOKING_EVENTS_RESUMPTION,
  createAvailabilityRulesModule,
  createHoldsModule,
  createBookingEventsModule,
  createBookingsModule,
  createCalendarFeedsModule,
  createDirectoryModule,
  createPricesModule,
  createProposalsModule,
  createStatusModule,
  createTokenAnalyticsModule,
  createWebhooksModule,
  resolverClasses,
  SESSION_TTL_SECONDS,
  type AgentsContext,
  type BookingEventsContext,
  type DirectoryContext,
  type PriceAdapter,
} from './modules/index.js';
import { JwtIssuer, resolveJwtSecret } from './platform/auth/jwt.js';
import { RateLimits } from './platform/http/rate-limit.js';
import { CostBudget } from './platform/graphql/cost-budget.js';
import { createMailer, type Mailer } from './platform/mail/mailer.js';
import { systemClock, type Clock } from './platform/clock.js';
import { Notifications } from './platform/db/notifications.js';
import { AfterCommit } from './platform/db/after-commit.js';
import { Statements } from './platform/db/statements.js';
import { inUnitOfWork } from './platform/db/unit-of-work.js';
import { checkPooledSessionDefaults, pooledConnectionSettings, preparePooledConnections } from './platform/db/pooling.js';
import { ReadYourWrites } from './platform/db/read-your-writes.js';
import { ReplicaRoutingDriver } from './platform/db/replica-routing.js';
import { replicaName, ReplicaSet } from './platform/db/replicas.js';
import { parseWalPosition } from './platform/db/wal-position.js';
import { installConsistencyTokens } from './platform/http/consistency-tokens.js';
import { answerTokensAfterMutations } from './platform/graphql/consistency-tokens.js';
import type { Orm } from './platform/db/orm.js';
import { buildGatewaySchema, resolverContainer } from './platform/graphql/schema.js';
import { lazyContext } from './platform/graphql/lazy-context.js';
import { GRAPHQL_PATH, registerGraphQL, type PlatformContext } from './platform/graphql/server.js';
import { TrustedDocuments } from './platform/graphql/trusted-documents.js';
import { clientAddress, proxyTrust } from './platform/http/client-address.js';
import { installActorResolution } from './platform/http/credential.js';
import { ActorResolver } from './platform/auth/actor.js';
import { FrameworkErrors, installErrorHandlers } from './platform/http/errors.js';
import { installInFlightTracking } from './platform/http/in-flight.js';
import { RequestMetrics } from './platform/http/request-metrics.js';
import { Metrics, registerMetricsRoute } from './platform/metrics/metrics.js';
import { registerPoolMetrics } from './platform/db/pool-metrics.js';
import { registerHealthRoutes } from './platform/http/health.js';
import { registerOpenApi } from './platform/http/openapi.js';
import { registerSecurityHeaders } from './platform/http/security-headers.js';
import { slowClientLimits } from './platform/http/slow-clients.js';
import { registerWebPages } from './platform/http/web-pages.js';
import { compileValidator, installJsonBodyParser, installQueryTextGuard } from './platform/http/validation.js';
import { startJobRunner, type TaskHandler } from './platform/jobs/queue.js';
import { ForegroundLoad } from './platform/jobs/foreground-load.js';
import type { Logger } from './platform/logger.js';
import { APP_MANIFEST, PACKAGE_ROOT } from './platform/manifest.js';
import { registerMcpEndpoint } from './platform/mcp/endpoint.js';

export interface AppDeps {
  config: Config;
  orm: Orm;
  /** The database the ORM is connected to (the embedded one has no DATABASE_URL). */
  databaseUrl: string;
  /** PostgreSQL itself, for the LISTEN connection and the job queue (DATABASE_DIRECT_URL); default `databaseUrl`. */
  directDatabaseUrl?: string;
  logger: Logger;
  clock?: Clock;
  /** Run the job queue worker in this process (webhook delivery, reminders). Default true. */
  jobs?: boolean;
  jobPollIntervalMs?: number;
  /** Overrides the SMTP_URL mailer (tests capture mail with a real SMTP server instead). */
  mailer?: Mailer;
  /** Overrides the GPU price adapters (tests point them at recorded responses). */
  priceAdapters?: readonly PriceAdapter[];
}

/** The gateway's version (package.json), reported by /api/status and MCP. */
export const APP_VERSION = APP_MANIFEST.version;

/**
 * The trusted-documents manifests `npm run codegen` writes (GraphQL Code Generator's persisted
 * documents): the pages' operations and the tests', relative to the package root.
 */
export const TRUSTED_DOCUMENT_MANIFESTS = [
  'src/web/generated/pages/persisted-documents.json',
  'src/web/generated/console/persisted-documents.json',
  'test/generated/persisted-documents.json',
] as const;

/** Which actor kinds each GRAPHQL_TRUSTED_DOCUMENTS_ONLY entry names. */
const TRUSTED_DOCUMENT_ACTORS = { anonymous: 'anonymous', agents: 'agent', users: 'account' } as const;

/** On shutdown, how long sign-in mails already accepted may take to leave. */
const MAIL_DRAIN_MS = 5_000;

const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/;

/** Builds the whole gateway on one Fastify instance, ready but not listening (tests `inject` into it). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, orm, logger, clock = systemClock } = deps;
  const trust = proxyTrust(config.trustProxy);
  const frameworkErrors = new FrameworkErrors();
  const app = Fastify({
    frameworkErrors: frameworkErrors.handle,
    loggerInstance: logger,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // A client slower than this to send its request (headers and body) is cut off (slow-clients.ts).
    requestTimeout: config.requestTimeoutMs,
    http: slowClientLimits(config.requestTimeoutMs),
    // Without TRUST_PROXY, Fastify's own default: the socket's peer, no header parsed per request.
    trustProxy: config.trustProxy === false ? false : trust,
    routerOptions: { ignoreTrailingSlash: true },
  });
  await registerSecurityHeaders(app);
  app.setValidatorCompiler(compileValidator);
  installJsonBodyParser(app);
  installQueryTextGuard(app);
  installErrorHandlers(app);
  frameworkErrors.install(app);
  // Who is calling is resolved once per request; the modules add their kinds of token below.
  const actors = new ActorResolver(config.adminToken);
  installActorResolution(app, actors);
  installInFlightTracking(app);
  const metrics = new Metrics();
  const requestMetrics = new RequestMetrics(metrics);
  requestMetrics.install(app);
  // One unit of work per request: every service call in it sees the same EntityManager fork.
  app.addHook('onRequest', (_request, _reply, done) => inUnitOfWork(done));
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await registerOpenApi(app);
  await registerWebPages(app, { explorer: config.graphqlExplorer });
  registerHealthRoutes(app, async () => {
    await orm.em.getConnection().execute('select 1');
  });

  const directDatabaseUrl = deps.directDatabaseUrl ?? deps.databaseUrl;
  const notifications = new Notifications(directDatabaseUrl, config.databaseTimeouts, logger);
  const statements = await Statements.forOrm(orm);
  const afterCommit = new AfterCommit(statements.pool, logger);
  await checkPooledSessionDefaults(statements.pool, config.databaseTimeouts, config.databasePooling);
  // Rate-limit counters live in PostgreSQL so every process shares one budget; a small pool of their own.
  const rateLimitPool = new pg.Pool({ ...pooledConnectionSettings(config.databaseTimeouts, config.databasePooling), connectionString: deps.databaseUrl, max: 5 });
  preparePooledConnections(rateLimitPool, config.databasePooling);
  // Once closing, a lost connection is the database going away with the process (GraphQL cost budgets
  // keep one of these connections open): news only for debugging, as for the other pools.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  rateLimitPool.on('error', (error) => logger[closing ? 'debug' : 'warn']({ err: error }, 'rate-limit connection lost'));
  const replicas = await startReplicaSet(orm, statements, config, logger, metrics);
  const consistency = new ReadYourWrites(statements.pool, afterCommit, replicas, { rememberForMs: rememberTokensForMs(config.databaseReplicas.maxLagMs) }, metrics, logger);
  consistency.startPruning();
  installConsistencyTokens(app, consistency, [GRAPHQL_PATH, '/mcp']);
  // Before any gauge that queries: a scrape reads the pools before its own statements wait on them.
  registerPoolMetrics(metrics, { orm: statements.pool, rate_limits: rateLimitPool });
  registerMetricsRoute(app, metrics, config.metricsToken);
  const rateLimits = new RateLimits(rateLimitPool, metrics);
  const costBudget = new CostBudget(rateLimitPool, config.graphqlCostPerMin, metrics, logger.child({ component: 'graphql' }));
  // Scheduling, concept by concept, lower ones first: each takes the services it builds on.
  const fanOutLimits = { agentCreatePerMin: config.agentCreatePerMin, agentFamilyMax: config.agentFamilyMax, pendingProposalsMax: config.pendingProposalsMax };
  const agentsModule = createAgentsModule({ em: orm.em, clock, statements, notifications, rateLimits, fanOutLimits });
  actors.accept(agentsModule.agents.tokens);
  const bookingEvents = createBookingEventsModule({ notifications, afterCommit, statements, logger, metrics, clock, retentionDays: config.bookingEventsRetentionDays });
  const bookingsModule = createBookingsModule({
    em: orm.em,
    clock,
    logger,
    statements,
    events: bookingEvents.bus,
    bookingCap: config.bookingCap,
    reminderLeadMinutes: config.reminderLeadMinutes,
  });
  const availabilityModule = createAvailabilityModule({ statements, clock });
  const availabilityRulesModule = createAvailabilityRulesModule({ em: orm.em, clock, statements });
  const holdsModule = createHoldsModule({
    statements,
    clock,
    events: bookingEvents.bus,
    bookingCap: config.bookingCap,
    onNewBookings: (bookings, at) => bookings.forEach((booking) => bookingsModule.bookings.noteNewBooking(booking, at)),
  });
  const proposalsModule = createProposalsModule({
    em: orm.em,
    clock,
    statements,
    bookings: bookingsModule.bookings,
    availability: availabilityModule.availability,
    events: bookingEvents.bus,
    fanOutLimits,
  });
  const foreground = new ForegroundLoad();
  app.addHook('onRequest', (_request, _reply, done) => {
    foreground.arrived();
    done();
  });
  app.addHook('onClose', async () => foreground.stop());
  const webhooksModule = createWebhooksModule({
    em: orm.em,
    clock,
    logger,
    statements,
    metrics,
    bus: bookingEvents.bus,
    foreground,
    busyPaceMs: config.webhookBusyPaceMs,
    settings: {
      retryBaseMs: config.webhookRetryBaseMs,
      maxAttempts: config.webhookMaxAttempts,
      allowPrivate: config.webhookAllowPrivate,
      timeoutMs: config.webhookTimeoutMs,
      disableAfterFailures: config.webhookDisableAfter,
      dnsServers: config.dnsServers,
      dnsTimeoutMs: config.dnsTimeoutMs,
    },
  });
  const calendarFeedsModule = createCalendarFeedsModule({ em: orm.em, clock, statements });
  const scheduling = [agentsModule, bookingsModule, proposalsModule, webhooksModule, calendarFeedsModule, availabilityModule, availabilityRulesModule, holdsModule, bookingEvents];
  for (const module of scheduling) if ('registerRoutes' in module) module.registerRoutes(app);

  const mailer = deps.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger, clock });
  const jwtSecret = await resolveJwtSecret(config.jwtSecret, (sql, params) => orm.em.fork().execute(sql, params));
  const directory = createDirectoryModule({
    em: orm.em,
    statements,
    clock,
    jwt: new JwtIssuer(jwtSecret, SESSION_TTL_SECONDS, clock),
    mailer,
    rateLimits,
    publicUrl: config.publicUrl,
    limits: { anonymousPerMinute: config.rateLimitAnonPerMin, signedInPerMinute: config.rateLimitAuthPerMin },
  });
  actors.accept(directory.accounts.tokens);
  directory.registerRoutes(app);

  const pricing = createPricesModule({
    statements,
    clock,
    notifications,
    adminToken: config.adminToken,
    providers: config.priceProviders,
    logger,
    ...(deps.priceAdapters ? { adapters: deps.priceAdapters } : {}),
    metrics,
  });
  pricing.registerRoutes(app);

  const tokenAnalytics = createTokenAnalyticsModule({ screenerUrl: config.screenerUrl, clock, rateLimits, readsPerMinute: config.rateLimitTokensPerMin });
  tokenAnalytics.registerRoutes(app);

  createStatusModule({
    em: orm.em,
    clock,
    requests: requestMetrics,
    tokens: tokenAnalytics.tokens,
    priceSources: pricing.refresher,
    mail: mailer,
    webhooks: webhooksModule.webhooks,
    aggregatorUrl: config.aggregatorUrl,
    logger,
    version: APP_VERSION,
    metrics,
    database: { poolMode: config.databasePooling.mode, replicas: () => replicas?.health() ?? [] },
  }).registerRoutes(app);

  registerMcpEndpoint(
    app,
    {
      // The order tools/list names them in.
      tools: [
        ...tokenAnalytics.mcpTools,
        ...bookingsModule.mcpTools,
        ...bookingEvents.mcpTools,
        ...proposalsModule.mcpTools,
        ...availabilityModule.mcpTools,
        ...availabilityRulesModule.mcpTools,
        ...holdsModule.mcpTools,
      ],
      logger,
      version: APP_VERSION,
    },
    { publicUrl: config.publicUrl, allowedOrigins: config.mcpAllowedOrigins, allowedHosts: config.mcpAllowedHosts },
  );

  const schema = answerTokensAfterMutations(await buildGatewaySchema({
    resolvers: resolverClasses,
    container: resolverContainer([...scheduling.flatMap((module): object[] => module.resolvers), ...directory.resolvers, ...pricing.resolvers]),
  }), consistency);
  await registerGraphQL<AgentsContext & BookingEventsContext & DirectoryContext>(app, {
    schema,
    logger,
    actors,
    runInScope: inUnitOfWork,
    clientAddress: (request) => clientAddress(request, trust),
    metrics,
    compileOperationsAfter: config.graphqlJitAfter,
    directHttpAnswers: config.graphqlHttpDirect,
    costBudget,
    resumableSubscriptions: [BOOKING_EVENTS_RESUMPTION],
    trustedDocuments: {
      documents: loadTrustedDocuments(config, logger),
      requiredFor: new Set(config.graphqlTrustedDocumentsOnly.map((caller) => TRUSTED_DOCUMENT_ACTORS[caller])),
    },
    // Each module's slice is built when an operation first reads it (a subscription never reads most).
    buildContext: lazyContext({
      agents: (base: PlatformContext) => agentsModule.createContext(base),
      bookingEvents: (base: PlatformContext) => bookingEvents.createContext(base),
      directory: (base: PlatformContext) => directory.createContext(base),
      prices: () => pricing.createContext(),
    }),
  });

  await notifications.start();
  await pricing.start();
  const inScope = (handler: TaskHandler): TaskHandler => (payload) => inUnitOfWork(() => handler(payload));
  const runner =
    deps.jobs === false
      ? undefined
      : await startJobRunner({
          connectionString: directDatabaseUrl,
          timeouts: config.databaseTimeouts,
          logger,
          tasks: Object.fromEntries(
            Object.entries({ ...bookingsModule.tasks, ...bookingEvents.tasks, ...webhooksModule.tasks, ...pricing.tasks }).map(([name, handler]) => [name, inScope(handler)]),
          ),
          crontab: [bookingsModule.crontab, bookingEvents.crontab, pricing.crontab].filter(Boolean).join('\n'),
          ...(deps.jobPollIntervalMs ? { pollIntervalMs: deps.jobPollIntervalMs } : {}),
        });
  if (runner) {
    webhooksModule.startBackground();
    bookingsModule.startBackground();
  }
  app.addHook('onClose', async () => {
    // Handlers whose clients went away may still be running: let them finish before their pools go.
    await app.requestsSettled(10_000);
    await bookingEvents.stop();
    await Promise.all([webhooksModule.stop(), bookingsModule.stop()]);
    await runner?.stop();
    // Writes finishing while the process drained announce their events and answered their tokens: sent before the pool goes.
    await afterCommit.flush();
    await notifications.stop();
    consistency.stop();
    await replicas?.stop();
    // Points admitted in this process and not yet written, refunds included, are written before the pool goes.
    await costBudget.close();
    await rateLimitPool.end();
    await mailer.close?.(MAIL_DRAIN_MS);
  });

  await app.ready();
  return app;
}

/**
 * The trusted documents of the build. A manifest that is missing (codegen has not run) is left out with
 * a warning; with GRAPHQL_TRUSTED_DOCUMENTS_ONLY set and no manifest at all the process does not start,
 * since it would refuse every document of the callers named.
 */
function loadTrustedDocuments(config: Config, logger: Logger): TrustedDocuments {
  const files = TRUSTED_DOCUMENT_MANIFESTS.map((file) => resolve(PACKAGE_ROOT, file));
  const present = files.filter((file) => existsSync(file));
  for (const file of files) if (!present.includes(file)) logger.warn({ file }, 'trusted-documents manifest missing: run `npm run codegen`');
  if (present.length === 0 && config.graphqlTrustedDocumentsOnly.length > 0) {
    throw new Error('GRAPHQL_TRUSTED_DOCUMENTS_ONLY is set but no trusted-documents manifest was found: run `npm run build` (codegen writes them)');
  }
  return TrustedDocuments.load(present);
}

/**
 * How long a credential's consistency token is remembered: a serving replica lags at most the bound,
 * so past it (with room for checks that come late) every one of them has replayed the token.
 */
function rememberTokensForMs(maxLagMs: number): number {
  return Math.max(60_000, 10 * maxLagMs);
}

/** The read replicas of DATABASE_REPLICA_URLS, checked once before the first request; undefined without any. */
async function startReplicaSet(orm: Orm, statements: Statements, config: Config, logger: Logger, metrics: Metrics): Promise<ReplicaSet | undefined> {
  const { urls, maxLagMs } = config.databaseReplicas;
  const driver = orm.em.getDriver();
  if (urls.length === 0 || !(driver instanceof ReplicaRoutingDriver)) return undefined;
  const pools = await driver.replicaPools();
  const set = new ReplicaSet(
    urls.map((url, index) => ({ name: replicaName(index), url, index, pool: pools[index]! })),
    async () => {
      const { rows } = await statements.pool.query<{ position: string }>('select pg_current_wal_insert_lsn()::text as position');
      return parseWalPosition(rows[0]!.position)!;
    },
    { maxLagMs, timeouts: config.databaseTimeouts, pooling: config.databasePooling },
    logger.child({ component: 'replicas' }),
    metrics,
  );
  await set.start();
  return set;
}
