import { isIP } from 'node:net';
import { z } from 'zod';
import type { DatabaseTimeouts } from './platform/db/timeouts.js';
import type { PoolPolicy } from './platform/db/pooling.js';
import { SettingError } from './platform/setting-error.js';

/**
 * The only place that reads `process.env`. Every setting is declared once here with its default;
 * `loadConfig` parses the environment into a typed, frozen object and names the first bad variable.
 */
// Each message says what the variable accepts, never the value it was given (it may be a secret).
const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'must be true or false (or 1/0, yes/no, on/off)' })
  .transform((value) => ['true', '1', 'yes', 'on'].includes(value));

/** A whole number from `min` to `max`; any other text gets the same message, which says so. */
const wholeNumber = (min: number, max: number, accepted = max === Number.MAX_SAFE_INTEGER ? `a whole number, ${min} or more` : `a whole number from ${min} to ${max}`) =>
  z
    .string()
    .regex(/^\d+$/, `must be ${accepted}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be ${accepted}`).max(max, `must be ${accepted}`));

const positiveInt = (max = Number.MAX_SAFE_INTEGER) => wholeNumber(1, max);

const url = (protocols: readonly string[], example: string) => {
  const accepted = `must be a URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')} (${example})`;
  return z.string().refine((value) => URL.canParse(value) && protocols.includes(new URL(value).protocol), accepted);
};

const oneOf = <const Values extends readonly [string, ...string[]]>(values: Values) =>
  z.enum(values, { message: `must be one of ${values.join(', ')}` });

/**
 * TRUST_PROXY: unset or `false` trusts no proxy (the socket's peer is the client); a whole number trusts
 * that many proxy hops in front of the server; otherwise a comma-separated list of proxy addresses or
 * CIDR ranges (`10.0.0.0/8`) or proxy-addr's names (`loopback`, `linklocal`, `uniquelocal`).
 */
const trustProxy = z
  .string()
  .transform((value, context): false | number | string[] => {
    const text = value.trim();
    if (text === 'false') return false;
    if (/^\d+$/.test(text)) return Number(text) === 0 ? false : Number(text);
    const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean);
    const bad = entries.find((entry) => !isProxyAddress(entry));
    if (bad !== undefined || entries.length === 0) {
      context.addIssue({ code: 'custom', message: `must be false, a hop count or a list of addresses or CIDR ranges (not ${bad ?? 'empty'})` });
      return z.NEVER;
    }
    return entries;
  });

function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || address === undefined || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128);
}

function isNameServer(entry: string): boolean {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(entry) ?? [entry, entry, undefined];
  const [, address, port] = match;
  return isIP(address ?? '') !== 0 && (port === undefined || (Number(port) >= 1 && Number(port) <= 65_535));
}

/** `https://app.example.com[:port]` as browsers send it in `Origin`: a scheme, a host and a port, nothing else. */
function asOrigin(entry: string): string | undefined {
  if (!URL.canParse(entry)) return undefined;
  const url = new URL(entry);
  const bare = ['http:', 'https:'].includes(url.protocol) && url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
  return bare ? url.origin : undefined;
}

/** A host name or IP address as the `Host` header names it, without a port (`gateway`, `10.0.0.5`, `[::1]`). */
function asHostname(entry: string): string | undefined {
  if (!URL.canParse(`http://${entry}`)) return undefined;
  const url = new URL(`http://${entry}`);
  return url.hostname === entry.toLowerCase() && url.port === '' ? url.hostname : undefined;
}

function isPostgresUrl(entry: string): boolean {
  return URL.canParse(entry) && ['postgres:', 'postgresql:'].includes(new URL(entry).protocol);
}

/** A comma-separated list whose every entry `read` accepts, normalised by it. */
const listOf = (read: (entry: string) => string | undefined, expected: string) =>
  z.string().transform((value, context): string[] => {
    const entries = value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    const bad = entries.find((entry) => read(entry) === undefined);
    if (bad !== undefined) {
      context.addIssue({ code: 'custom', message: `must list ${expected} (not ${bad})` });
      return z.NEVER;
    }
    return entries.map((entry) => read(entry)!);
  });

const PRICE_PROVIDERS = ['aws', 'azure', 'gcp', 'oci', 'lambda', 'runpod', 'vast'] as const;

/** The kinds of caller GRAPHQL_TRUSTED_DOCUMENTS_ONLY can restrict to trusted documents. */
export const TRUSTED_DOCUMENT_CALLERS = ['anonymous', 'agents', 'users'] as const;
export type TrustedDocumentCaller = (typeof TRUSTED_DOCUMENT_CALLERS)[number];

const envSchema = z.object({
  PORT: wholeNumber(0, 65535, 'a whole number from 0 to 65535 (0: any free port)').default(3000),
  HOST: z.string().min(1, 'must not be empty').default('0.0.0.0'),
  TRUST_PROXY: trustProxy.default(false),
  DATABASE_URL: url(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/database').optional(),
  DATABASE_POOL_MODE: oneOf(['session', 'transaction']).default('session'),
  DATABASE_DIRECT_URL: url(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/database').optional(),
  DATABASE_PREPARED_STATEMENTS: booleanFlag.optional(),
  DATABASE_REPLICA_URLS: listOf((entry) => (isPostgresUrl(entry) ? entry : undefined), 'postgres:// URLs').default([]),
  DATABASE_REPLICA_MAX_LAG_MS: positiveInt(3_600_000).default(2_000),
  DB_CONNECT_TIMEOUT_MS: positiveInt(120_000).default(5_000),
  DB_STATEMENT_TIMEOUT_MS: positiveInt(600_000).default(10_000),
  DB_LOCK_TIMEOUT_MS: positiveInt(600_000).default(5_000),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: positiveInt(3_600_000).default(30_000),
  REQUEST_TIMEOUT_MS: positiveInt(600_000).default(30_000),
  DATA_DIR: z.string().min(1, 'must not be empty').default('./.data'),
  PUBLIC_URL: url(['http:', 'https:'], 'https://gateway.example.com').optional(),
  SMTP_URL: url(['smtp:', 'smtps:'], 'smtp://user:password@mail.example.com:587').optional(),
  MAIL_FROM: z.string().min(3, 'must be a sender address such as no-reply@example.com').default('no-reply@localhost'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SCREENER_URL: url(['http:', 'https:'], 'https://api.dexscreener.com').default('https://api.dexscreener.com'),
  AGGREGATOR_URL: url(['http:', 'https:'], 'https://hermes.pyth.network').default('https://hermes.pyth.network'),
  BOOKING_CAP: positiveInt().default(500),
  // The database holds the last two (triggers compare an int4 count), hence the bound.
  AGENT_CREATE_PER_MIN: positiveInt(1_000_000_000).default(120),
  AGENT_FAMILY_MAX: positiveInt(1_000_000_000).default(10_000),
  PENDING_PROPOSALS_MAX: positiveInt(1_000_000_000).default(50),
  RATE_LIMIT_ANON_PER_MIN: positiveInt().default(60),
  RATE_LIMIT_AUTH_PER_MIN: positiveInt().default(600),
  RATE_LIMIT_TOKENS_PER_MIN: positiveInt().default(120),
  WEBHOOK_RETRY_BASE_MS: positiveInt().default(1000),
  WEBHOOK_MAX_ATTEMPTS: positiveInt(100).default(10),
  WEBHOOK_ALLOW_PRIVATE: booleanFlag.default(false),
  WEBHOOK_TIMEOUT_MS: positiveInt(120_000).default(10_000),
  WEBHOOK_DISABLE_AFTER: positiveInt(1000).default(5),
  // 0: the dispatcher never yields to requests.
  WEBHOOK_BUSY_PACE_MS: wholeNumber(0, 60_000).default(50),
  DNS_SERVERS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((server) => server.trim())
        .filter(Boolean),
    )
    .refine((servers) => servers.every(isNameServer), 'must list IP addresses, each with an optional port (1.1.1.1, 1.1.1.1:53, [::1]:53)')
    .default([]),
  DNS_TIMEOUT_MS: positiveInt(60_000).default(2_000),
  REMINDER_LEAD_MINUTES: positiveInt(7 * 24 * 60).default(15),
  BOOKING_EVENTS_RETENTION_DAYS: positiveInt(36_500).default(30),
  PRICE_PROVIDERS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((provider) => provider.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(PRICE_PROVIDERS, { message: `must list only ${PRICE_PROVIDERS.join(', ')}, comma-separated (empty: none)` })))
    .default([...PRICE_PROVIDERS]),
  GRAPHQL_EXPLORER: booleanFlag.default(true),
  GRAPHQL_TRUSTED_DOCUMENTS_ONLY: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((caller) => caller.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(TRUSTED_DOCUMENT_CALLERS, { message: `must list only ${TRUSTED_DOCUMENT_CALLERS.join(', ')}` })))
    .default([]),
  GRAPHQL_COST_PER_MIN: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'a whole number, 0 or more (0: reported, not enforced)').default(100_000),
  GRAPHQL_JIT: z
    .string()
    .regex(/^(off|\d+)$/, 'must be off or a whole number')
    .transform((value) => (value === 'off' ? 0 : Number(value)))
    .pipe(z.number().int().min(0).max(1_000_000, 'must be at most 1000000'))
    .default(2),
  GRAPHQL_HTTP_DIRECT: oneOf(['on', 'off']).default('on'),
  MCP_ALLOWED_ORIGINS: listOf(asOrigin, 'origins, each a scheme, a host and an optional port such as https://app.example.com').default([]),
  MCP_ALLOWED_HOSTS: listOf(asHostname, 'host names or addresses, each without a port, such as gateway, 10.0.0.5 or [::1]').default([]),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:'], 'http://collector:4318').optional(),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

type Env = z.infer<typeof envSchema>;

/** Every environment variable the gateway reads. */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as readonly (keyof Env)[];

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Which proxies in front of the server to believe about the client's address (see TRUST_PROXY). */
  readonly trustProxy: false | number | readonly string[];
  /** External PostgreSQL; undefined means an embedded server under `dataDir`. Behind a pooler: the pooler. */
  readonly databaseUrl: string | undefined;
  /**
   * PostgreSQL itself, for what needs a session of its own: the LISTEN connection, the job queue,
   * migrations. DATABASE_DIRECT_URL, or DATABASE_URL when that is PostgreSQL itself.
   */
  readonly databaseDirectUrl: string | undefined;
  /** How DATABASE_URL's and the replicas' pooled connections reach PostgreSQL (db/pooling.ts). */
  readonly databasePooling: PoolPolicy;
  /** Hot standbys that serve reads once they have replayed the caller's last write (db/replicas.ts). */
  readonly databaseReplicas: { readonly urls: readonly string[]; readonly maxLagMs: number };
  /** Bounds on every database connection of the process (db/timeouts.ts). */
  readonly databaseTimeouts: DatabaseTimeouts;
  /** A client that has not sent its whole request (headers and body) by then is cut off (http/slow-clients.ts). */
  readonly requestTimeoutMs: number;
  readonly dataDir: string;
  readonly publicUrl: string;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly jwtSecret: string | undefined;
  readonly adminToken: string | undefined;
  /** Bearer token that `GET /metrics` requires; undefined: the endpoint is not served (404). */
  readonly metricsToken: string | undefined;
  readonly screenerUrl: string;
  readonly aggregatorUrl: string;
  readonly bookingCap: number;
  /** Child agents one agent may create per minute (a budget shared by every process). */
  readonly agentCreatePerMin: number;
  /** Agents in one family: a root agent and all its descendants. */
  readonly agentFamilyMax: number;
  /** Pending proposals from one agent to one target. */
  readonly pendingProposalsMax: number;
  readonly rateLimitAnonPerMin: number;
  readonly rateLimitAuthPerMin: number;
  /** Token analytics and safety reads per client address (REST and MCP). */
  readonly rateLimitTokensPerMin: number;
  readonly webhookRetryBaseMs: number;
  readonly webhookMaxAttempts: number;
  readonly webhookAllowPrivate: boolean;
  /** A receiver that has not answered by then is cut off. */
  readonly webhookTimeoutMs: number;
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  readonly webhookDisableAfter: number;
  /** While the process is busy with requests, the webhook dispatcher claims at most this often (0: never yields). */
  readonly webhookBusyPaceMs: number;
  /** Name servers for webhook host names (empty: the system's). */
  readonly dnsServers: readonly string[];
  /** A webhook host-name lookup, waiting included, gives up after this. */
  readonly dnsTimeoutMs: number;
  readonly reminderLeadMinutes: number;
  /**
   * Booking events older than this many days are deleted (hourly), with their webhook deliveries; a
   * change-feed or subscription cursor from before what is kept answers `cursor_expired`.
   */
  readonly bookingEventsRetentionDays: number;
  readonly priceProviders: readonly string[];
  readonly graphqlExplorer: boolean;
  /**
   * Callers who may send only the documents the build published (GraphQL over HTTP `documentId`, their
   * hash, or their text): none by default. The operator (ADMIN_TOKEN) is never restricted.
   */
  readonly graphqlTrustedDocumentsOnly: readonly TrustedDocumentCaller[];
  /** GraphQL cost points one caller may spend per minute, across processes; 0: not enforced (costs still reported). */
  readonly graphqlCostPerMin: number;
  /**
   * A query or mutation is compiled by graphql-jit on its `graphqlJitAfter`-th request (2: the first
   * time it comes again; 1: at once); 0 (`off`): graphql-js runs every operation.
   */
  readonly graphqlJitAfter: number;
  /**
   * GraphQL over HTTP answers a POSTed query whose text it has validated before without Apollo Server's
   * request pipeline, running the same plugins, cost budget and executor (`off`: Apollo answers every request).
   */
  readonly graphqlHttpDirect: boolean;
  /**
   * Browser origins whose pages may call `/mcp`; a request with any other `Origin` is refused (403),
   * one without (agents send none) passes.
   */
  readonly mcpAllowedOrigins: readonly string[];
  /** Host names `/mcp` answers to besides PUBLIC_URL's and the loopback names (a proxy's upstream name). */
  readonly mcpAllowedHosts: readonly string[];
  readonly logLevel: Env['LOG_LEVEL'];
  /** OTLP collector; set, traces are exported (the SDK reads it and the other OTEL_* variables itself). */
  readonly otlpEndpoint: string | undefined;
}

/** A variable whose value the gateway cannot take: `Invalid configuration: NAME must …`. */
export class ConfigError extends SettingError {
  constructor(variable: string, reason: string) {
    super(variable, `Invalid configuration: ${variable} ${reason}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment (defaults to `process.env`); throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "unset", as in most twelve-factor tooling.
  const present = Object.fromEntries(
    Object.keys(envSchema.shape)
      .filter((key) => env[key] !== undefined && env[key] !== '')
      .map((key) => [key, env[key]]),
  );
  // PRICE_PROVIDERS set to the empty string disables every adapter rather than meaning "default".
  if (env.PRICE_PROVIDERS === '') present.PRICE_PROVIDERS = '';

  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  const e = parsed.data;
  if (e.DATABASE_POOL_MODE === 'transaction' && !e.DATABASE_URL) {
    throw new ConfigError('DATABASE_POOL_MODE', 'transaction needs DATABASE_URL (the pooler); the embedded database has none');
  }
  if (e.DATABASE_POOL_MODE === 'transaction' && !e.DATABASE_DIRECT_URL) {
    throw new ConfigError('DATABASE_DIRECT_URL', 'must be set when DATABASE_POOL_MODE is transaction: LISTEN, the job queue and migrations need PostgreSQL itself');
  }
  if (e.DATABASE_DIRECT_URL && !e.DATABASE_URL) throw new ConfigError('DATABASE_DIRECT_URL', 'needs DATABASE_URL as well (the embedded database is reached directly)');
  if (e.DATABASE_REPLICA_URLS.length > 0 && !e.DATABASE_URL) throw new ConfigError('DATABASE_REPLICA_URLS', 'needs DATABASE_URL (the primary); the embedded database has no replicas');
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    trustProxy: Array.isArray(e.TRUST_PROXY) ? Object.freeze([...e.TRUST_PROXY]) : e.TRUST_PROXY,
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL ?? e.DATABASE_URL,
    databasePooling: Object.freeze({
      mode: e.DATABASE_POOL_MODE,
      // A transaction pooler keeps named statements only when it says so (PgBouncer ≥ 1.21, max_prepared_statements).
      namedStatements: e.DATABASE_PREPARED_STATEMENTS ?? e.DATABASE_POOL_MODE === 'session',
    }),
    databaseReplicas: Object.freeze({ urls: Object.freeze([...e.DATABASE_REPLICA_URLS]), maxLagMs: e.DATABASE_REPLICA_MAX_LAG_MS }),
    databaseTimeouts: Object.freeze({
      connectMs: e.DB_CONNECT_TIMEOUT_MS,
      statementMs: e.DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.DB_LOCK_TIMEOUT_MS,
      idleInTransactionMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    }),
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    dataDir: e.DATA_DIR,
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, ''),
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    jwtSecret: e.JWT_SECRET,
    adminToken: e.ADMIN_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    screenerUrl: e.SCREENER_URL.replace(/\/$/, ''),
    aggregatorUrl: e.AGGREGATOR_URL.replace(/\/$/, ''),
    bookingCap: e.BOOKING_CAP,
    agentCreatePerMin: e.AGENT_CREATE_PER_MIN,
    agentFamilyMax: e.AGENT_FAMILY_MAX,
    pendingProposalsMax: e.PENDING_PROPOSALS_MAX,
    rateLimitAnonPerMin: e.RATE_LIMIT_ANON_PER_MIN,
    rateLimitAuthPerMin: e.RATE_LIMIT_AUTH_PER_MIN,
    rateLimitTokensPerMin: e.RATE_LIMIT_TOKENS_PER_MIN,
    webhookRetryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
    webhookMaxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookDisableAfter: e.WEBHOOK_DISABLE_AFTER,
    webhookBusyPaceMs: e.WEBHOOK_BUSY_PACE_MS,
    dnsServers: Object.freeze([...e.DNS_SERVERS]),
    dnsTimeoutMs: e.DNS_TIMEOUT_MS,
    reminderLeadMinutes: e.REMINDER_LEAD_MINUTES,
    bookingEventsRetentionDays: e.BOOKING_EVENTS_RETENTION_DAYS,
    priceProviders: Object.freeze([...e.PRICE_PROVIDERS]),
    graphqlExplorer: e.GRAPHQL_EXPLORER,
    graphqlTrustedDocumentsOnly: Object.freeze([...new Set(e.GRAPHQL_TRUSTED_DOCUMENTS_ONLY)]),
    graphqlJitAfter: e.GRAPHQL_JIT,
    graphqlHttpDirect: e.GRAPHQL_HTTP_DIRECT === 'on',
    graphqlCostPerMin: e.GRAPHQL_COST_PER_MIN,
    mcpAllowedOrigins: Object.freeze([...e.MCP_ALLOWED_ORIGINS]),
    mcpAllowedHosts: Object.freeze([...e.MCP_ALLOWED_HOSTS]),
    logLevel: e.LOG_LEVEL,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
  });
}
