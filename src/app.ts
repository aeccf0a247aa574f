import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import pg from 'pg';
import {
  createAgentsModule,
  createAvailabilityModule,
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
import { createMailer, type Mailer } from './platform/mail/mailer.js';
import { systemClock, type Clock } from './platform/clock.js';
import { Notifications } from './platform/db/notifications.js';
import { Statements } from './platform/db/statements.js';
import { inUnitOfWork } from './platform/db/unit-of-work.js';
import { closeSilentConnections, connectionSettings } from './platform/db/timeouts.js';
import type { Orm } from './platform/db/orm.js';
import { buildGatewaySchema, resolverContainer } from './platform/graphql/schema.js';
import { registerGraphQL } from './platform/graphql/server.js';
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
import type { Logger } from './platform/logger.js';
import { APP_MANIFEST } from './platform/manifest.js';
import { registerMcpEndpoint } from './platform/mcp/endpoint.js';

export interface AppDeps {
  config: Config;
  orm: Orm;
  /** The database the ORM is connected to (the embedded one has no DATABASE_URL). */
  databaseUrl: string;
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

  const notifications = new Notifications(deps.databaseUrl, config.databaseTimeouts, logger);
  const statements = await Statements.forOrm(orm);
  // Rate-limit counters live in PostgreSQL so every process shares one budget; a small pool of their own.
  const rateLimitPool = new pg.Pool({ ...connectionSettings(config.databaseTimeouts), connectionString: deps.databaseUrl, max: 5 });
  closeSilentConnections(rateLimitPool);
  rateLimitPool.on('error', (error) => logger.warn({ err: error }, 'rate-limit connection lost'));
  // Before any gauge that queries: a scrape reads the pools before its own statements wait on them.
  registerPoolMetrics(metrics, { orm: statements.pool, rate_limits: rateLimitPool });
  registerMetricsRoute(app, metrics, config.metricsToken);
  const rateLimits = new RateLimits(rateLimitPool, metrics);
  // Scheduling, concept by concept, lower ones first: each takes the services it builds on.
  const fanOutLimits = { agentCreatePerMin: config.agentCreatePerMin, agentFamilyMax: config.agentFamilyMax, pendingProposalsMax: config.pendingProposalsMax };
  const agentsModule = createAgentsModule({ em: orm.em, clock, statements, notifications, rateLimits, fanOutLimits });
  actors.accept(agentsModule.agents.tokens);
  const bookingEvents = createBookingEventsModule({ notifications, statements, logger, metrics, clock, retentionDays: config.bookingEventsRetentionDays });
  const bookingsModule = createBookingsModule({
    em: orm.em,
    clock,
    logger,
    statements,
    events: bookingEvents.bus,
    bookingCap: config.bookingCap,
    reminderLeadMinutes: config.reminderLeadMinutes,
  });
  const availabilityModule = createAvailabilityModule({ statements });
  const proposalsModule = createProposalsModule({
    em: orm.em,
    clock,
    statements,
    bookings: bookingsModule.bookings,
    availability: availabilityModule.availability,
    events: bookingEvents.bus,
    fanOutLimits,
  });
  const webhooksModule = createWebhooksModule({
    em: orm.em,
    clock,
    logger,
    statements,
    metrics,
    bus: bookingEvents.bus,
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
  const scheduling = [agentsModule, bookingsModule, proposalsModule, webhooksModule, calendarFeedsModule, availabilityModule, bookingEvents];
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
  }).registerRoutes(app);

  registerMcpEndpoint(
    app,
    {
      // The order tools/list names them in.
      tools: [...tokenAnalytics.mcpTools, ...bookingsModule.mcpTools, ...bookingEvents.mcpTools, ...proposalsModule.mcpTools, ...availabilityModule.mcpTools],
      logger,
      version: APP_VERSION,
    },
    { publicUrl: config.publicUrl, allowedOrigins: config.mcpAllowedOrigins, allowedHosts: config.mcpAllowedHosts },
  );

  const schema = await buildGatewaySchema({
    resolvers: resolverClasses,
    container: resolverContainer([...scheduling.flatMap((module): object[] => module.resolvers), ...directory.resolvers, ...pricing.resolvers]),
  });
  await registerGraphQL<AgentsContext & BookingEventsContext & DirectoryContext>(app, {
    schema,
    logger,
    actors,
    runInScope: inUnitOfWork,
    clientAddress: (request) => clientAddress(request, trust),
    metrics,
    buildContext: (base) => ({
      ...base,
      agents: agentsModule.createContext(base),
      bookingEvents: bookingEvents.createContext(base),
      directory: directory.createContext(base),
      prices: pricing.createContext(),
    }),
  });

  await notifications.start();
  await pricing.start();
  const inScope = (handler: TaskHandler): TaskHandler => (payload) => inUnitOfWork(() => handler(payload));
  const runner =
    deps.jobs === false
      ? undefined
      : await startJobRunner({
          connectionString: deps.databaseUrl,
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
    await notifications.stop();
    await rateLimitPool.end();
    await mailer.close?.(MAIL_DRAIN_MS);
  });

  await app.ready();
  return app;
}
