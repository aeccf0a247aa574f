import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: './.data',
      publicUrl: 'http://localhost:3000',
      mailFrom: 'no-reply@localhost',
      screenerUrl: 'https://api.dexscreener.com',
      aggregatorUrl: 'https://hermes.pyth.network',
      bookingCap: 500,
      agentCreatePerMin: 120,
      agentFamilyMax: 10_000,
      pendingProposalsMax: 50,
      rateLimitAnonPerMin: 60,
      rateLimitAuthPerMin: 600,
      webhookRetryBaseMs: 1000,
      webhookMaxAttempts: 10,
      webhookAllowPrivate: false,
      reminderLeadMinutes: 15,
      bookingEventsRetentionDays: 30,
      priceProviders: ['aws', 'azure', 'gcp', 'oci', 'lambda', 'runpod', 'vast'],
      logLevel: 'info',
      trustProxy: false,
      otlpEndpoint: undefined,
      databaseTimeouts: { connectMs: 5000, statementMs: 10_000, lockMs: 5000, idleInTransactionMs: 30_000 },
    });
  });

  it.each([
    ['false', false],
    ['0', false],
    ['2', 2],
    ['10.0.0.0/8, loopback,2001:db8::/32', ['10.0.0.0/8', 'loopback', '2001:db8::/32']],
    ['192.0.2.7', ['192.0.2.7']],
  ])('reads TRUST_PROXY=%p', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it('reads WEBHOOK_BUSY_PACE_MS from 0 (never yield) to 60000, 50 by default', () => {
    expect(loadConfig({}).webhookBusyPaceMs).toBe(50);
    expect(loadConfig({ WEBHOOK_BUSY_PACE_MS: '0' }).webhookBusyPaceMs).toBe(0);
    expect(loadConfig({ WEBHOOK_BUSY_PACE_MS: '60000' }).webhookBusyPaceMs).toBe(60_000);
    expect(() => loadConfig({ WEBHOOK_BUSY_PACE_MS: '60001' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_BUSY_PACE_MS: '-1' })).toThrow(ConfigError);
  });

  it('reads DNS_SERVERS as a list of addresses with optional ports (empty: the system\'s)', () => {
    expect(loadConfig({ DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[::1]:53,::1' }).dnsServers).toEqual(['1.1.1.1', '127.0.0.1:5353', '[::1]:53', '::1']);
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(loadConfig({}).dnsTimeoutMs).toBe(2000);
  });

  it('reads the MCP origins and hosts as normalised lists (none by default)', () => {
    expect(loadConfig({})).toMatchObject({ mcpAllowedOrigins: [], mcpAllowedHosts: [] });
    const config = loadConfig({ MCP_ALLOWED_ORIGINS: 'https://App.example.com, http://localhost:5173,https://x.example:443/', MCP_ALLOWED_HOSTS: 'Gateway,10.0.0.5,[::1]' });
    expect(config.mcpAllowedOrigins).toEqual(['https://app.example.com', 'http://localhost:5173', 'https://x.example']);
    expect(config.mcpAllowedHosts).toEqual(['gateway', '10.0.0.5', '[::1]']);
  });

  it('reaches PostgreSQL directly, with named statements and no replicas, by default', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db/app' })).toMatchObject({
      databaseUrl: 'postgres://db/app',
      databaseDirectUrl: 'postgres://db/app',
      databasePooling: { mode: 'session', namedStatements: true },
      databaseReplicas: { urls: [], maxLagMs: 2000 },
    });
  });

  it('puts the pooled connections behind a transaction pooler and what needs a session on DATABASE_DIRECT_URL', () => {
    const env = { DATABASE_URL: 'postgres://pgbouncer:6432/app', DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: 'postgres://db:5432/app' };
    expect(loadConfig(env)).toMatchObject({
      databaseUrl: 'postgres://pgbouncer:6432/app',
      databaseDirectUrl: 'postgres://db:5432/app',
      databasePooling: { mode: 'transaction', namedStatements: false },
    });
    // PgBouncer 1.21 and later keep named statements with max_prepared_statements.
    expect(loadConfig({ ...env, DATABASE_PREPARED_STATEMENTS: 'true' }).databasePooling).toEqual({ mode: 'transaction', namedStatements: true });
    expect(() => loadConfig({ DATABASE_URL: env.DATABASE_URL, DATABASE_POOL_MODE: 'transaction' })).toThrow(
      /DATABASE_DIRECT_URL must be set when DATABASE_POOL_MODE is transaction/,
    );
  });

  it('reads DATABASE_REPLICA_URLS as a list', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/app', DATABASE_REPLICA_URLS: 'postgres://replica-1/app, postgresql://replica-2/app', DATABASE_REPLICA_MAX_LAG_MS: '500' });
    expect(config.databaseReplicas).toEqual({ urls: ['postgres://replica-1/app', 'postgresql://replica-2/app'], maxLagMs: 500 });
  });

  it('derives PUBLIC_URL from PORT and treats an empty PRICE_PROVIDERS as "none"', () => {
    const config = loadConfig({ PORT: '8080', PRICE_PROVIDERS: '' });
    expect(config.publicUrl).toBe('http://localhost:8080');
    expect(config.priceProviders).toEqual([]);
  });

  it('reads GRAPHQL_JIT as the request on which an operation is compiled (2 by default; off or 0: never)', () => {
    expect(loadConfig({}).graphqlJitAfter).toBe(2);
    expect(loadConfig({ GRAPHQL_JIT: '1' }).graphqlJitAfter).toBe(1);
    expect(loadConfig({ GRAPHQL_JIT: 'off' }).graphqlJitAfter).toBe(0);
    expect(loadConfig({ GRAPHQL_JIT: '0' }).graphqlJitAfter).toBe(0);
  });

  it('reads GRAPHQL_HTTP_DIRECT as whether known query texts skip Apollo Server\'s pipeline (on by default)', () => {
    expect(loadConfig({}).graphqlHttpDirect).toBe(true);
    expect(loadConfig({ GRAPHQL_HTTP_DIRECT: 'off' }).graphqlHttpDirect).toBe(false);
    expect(() => loadConfig({ GRAPHQL_HTTP_DIRECT: 'no' })).toThrow(/GRAPHQL_HTTP_DIRECT/);
  });

  it('reads GRAPHQL_TRUSTED_DOCUMENTS_ONLY as the kinds of caller held to trusted documents (none by default)', () => {
    expect(loadConfig({}).graphqlTrustedDocumentsOnly).toEqual([]);
    expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'anonymous, users,anonymous' }).graphqlTrustedDocumentsOnly).toEqual(['anonymous', 'users']);
  });

  it.each([
    ['GRAPHQL_TRUSTED_DOCUMENTS_ONLY', 'anonymous,admins', /GRAPHQL_TRUSTED_DOCUMENTS_ONLY must list only anonymous, agents, users/],
    ['GRAPHQL_JIT', 'on', /GRAPHQL_JIT must be off or a whole number/],
    ['PORT', 'abc', /^Invalid configuration: PORT must be a whole number from 0 to 65535 \(0: any free port\)$/],
    ['PORT', '70000', /PORT must be a whole number from 0 to 65535/],
    ['BOOKING_CAP', '0', /^Invalid configuration: BOOKING_CAP must be a whole number, 1 or more$/],
    ['BOOKING_CAP', '-1', /^Invalid configuration: BOOKING_CAP must be a whole number, 1 or more$/],
    ['AGENT_CREATE_PER_MIN', '0', /^Invalid configuration: AGENT_CREATE_PER_MIN must be a whole number from 1 to 1000000000$/],
    ['AGENT_CREATE_PER_MIN', '12.5', /^Invalid configuration: AGENT_CREATE_PER_MIN must be a whole number from 1 to 1000000000$/],
    ['AGENT_FAMILY_MAX', 'many', /^Invalid configuration: AGENT_FAMILY_MAX must be a whole number from 1 to 1000000000$/],
    ['AGENT_FAMILY_MAX', '3000000000', /^Invalid configuration: AGENT_FAMILY_MAX must be a whole number from 1 to 1000000000$/],
    ['PENDING_PROPOSALS_MAX', '0', /^Invalid configuration: PENDING_PROPOSALS_MAX must be a whole number from 1 to 1000000000$/],
    ['PENDING_PROPOSALS_MAX', '-5', /^Invalid configuration: PENDING_PROPOSALS_MAX must be a whole number from 1 to 1000000000$/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\//],
    ['DATABASE_URL', 'garbage', /^Invalid configuration: DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\/ \(postgres:\/\/user:password@host:5432\/database\)$/],
    ['BOOKING_EVENTS_RETENTION_DAYS', '0', /^Invalid configuration: BOOKING_EVENTS_RETENTION_DAYS must be a whole number from 1 to 36500$/],
    ['BOOKING_EVENTS_RETENTION_DAYS', '7.5', /^Invalid configuration: BOOKING_EVENTS_RETENTION_DAYS must be a whole number from 1 to 36500$/],
    ['WEBHOOK_ALLOW_PRIVATE', 'maybe', /WEBHOOK_ALLOW_PRIVATE must be true or false/],
    ['PRICE_PROVIDERS', 'aws,nope', /PRICE_PROVIDERS must list only/],
    ['LOG_LEVEL', 'verbose', /^Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent$/],
    ['SMTP_URL', 'http://mail', /SMTP_URL must be a URL starting with smtp:\/\/ or smtps:\/\//],
    ['SMTP_URL', 'notaurl', /^Invalid configuration: SMTP_URL must be a URL starting with smtp:\/\/ or smtps:\/\/ \(smtp:\/\/user:password@mail.example.com:587\)$/],
    ['TRUST_PROXY', 'true', /TRUST_PROXY must be false, a hop count or a list/],
    ['TRUST_PROXY', '10.0.0.0/33', /TRUST_PROXY must be false/],
    ['TRUST_PROXY', 'proxy.example.com', /TRUST_PROXY must be false/],
    ['DB_STATEMENT_TIMEOUT_MS', '0', /DB_STATEMENT_TIMEOUT_MS must be a whole number from 1 to 600000/],
    ['DB_CONNECT_TIMEOUT_MS', '200000', /DB_CONNECT_TIMEOUT_MS must be a whole number from 1 to 120000/],
    ['DNS_SERVERS', 'dns.example.com', /DNS_SERVERS must list IP addresses/],
    ['DNS_SERVERS', '127.0.0.1:70000', /DNS_SERVERS must list IP addresses/],
    ['DNS_TIMEOUT_MS', '0', /DNS_TIMEOUT_MS must be a whole number from 1 to 60000/],
    ['MCP_ALLOWED_ORIGINS', 'https://app.example.com/mcp', /MCP_ALLOWED_ORIGINS must list origins.*\(not https:\/\/app.example.com\/mcp\)/],
    ['MCP_ALLOWED_ORIGINS', '*', /MCP_ALLOWED_ORIGINS must list origins/],
    ['MCP_ALLOWED_ORIGINS', 'null', /MCP_ALLOWED_ORIGINS must list origins/],
    ['MCP_ALLOWED_ORIGINS', 'ftp://files.example.com', /MCP_ALLOWED_ORIGINS must list origins/],
    ['MCP_ALLOWED_HOSTS', 'gateway:3000', /MCP_ALLOWED_HOSTS must list host names.*\(not gateway:3000\)/],
    ['MCP_ALLOWED_HOSTS', '::1', /MCP_ALLOWED_HOSTS must list host names/],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', /OTEL_EXPORTER_OTLP_ENDPOINT must be a URL starting with http:\/\/ or https:\/\//],
    ['DATABASE_POOL_MODE', 'statement', /^Invalid configuration: DATABASE_POOL_MODE must be one of session, transaction$/],
    ['DATABASE_POOL_MODE', 'transaction', /DATABASE_POOL_MODE transaction needs DATABASE_URL/],
    ['DATABASE_DIRECT_URL', 'postgres://db/app', /DATABASE_DIRECT_URL needs DATABASE_URL as well/],
    ['DATABASE_PREPARED_STATEMENTS', 'sometimes', /DATABASE_PREPARED_STATEMENTS must be true or false/],
    ['DATABASE_REPLICA_URLS', 'postgres://replica-1/app,replica-2', /DATABASE_REPLICA_URLS must list postgres:\/\/ URLs \(not replica-2\)/],
    ['DATABASE_REPLICA_URLS', 'postgres://replica-1/app', /DATABASE_REPLICA_URLS needs DATABASE_URL/],
    ['DATABASE_REPLICA_MAX_LAG_MS', '0', /^Invalid configuration: DATABASE_REPLICA_MAX_LAG_MS must be a whole number from 1 to 3600000$/],
  ])('names %s when it is %p', (variable, value, message) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(message);
  });

  // Not a value any variable takes: each one that refuses it says, in words, what it accepts.
  it.each(CONFIG_VARIABLES.map((variable) => [variable]))('says in one line what %s accepts when it refuses a value', (variable) => {
    let message: string | undefined;
    try {
      loadConfig({ [variable]: '%not*a value' });
    } catch (error) {
      message = (error as Error).message;
    }
    if (message === undefined) return; // free text (HOST, DATA_DIR, MAIL_FROM, the tokens): nothing to refuse here
    expect(message).toMatch(new RegExp(`^Invalid configuration: ${variable} must [^\n]+$`));
    expect(message).not.toMatch(/Invalid (input|option)|expected|Too (small|big)/);
  });
});

describe('docs/configuration.md', () => {
  const documented = new Set([...readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]));

  it('has a row for every variable the server reads, and none for one it does not', () => {
    expect([...CONFIG_VARIABLES].filter((variable) => !documented.has(variable))).toEqual([]);
    expect([...documented].filter((variable) => !(CONFIG_VARIABLES as readonly string[]).includes(variable!))).toEqual([]);
  });
});

