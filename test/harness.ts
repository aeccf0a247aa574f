import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { print, type FormattedExecutionResult } from 'graphql';
import pg from 'pg';
import { migrations } from '../migrations/index.js';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { entities } from '../src/modules/index.js';
import type { Clock } from '../src/platform/clock.js';
import type { Mailer } from '../src/platform/mail/mailer.js';
import type { PriceAdapter } from '../src/modules/prices/adapters/adapter.js';
import { createOrm, type Orm } from '../src/platform/db/orm.js';
import { namedReplicas } from '../src/platform/db/replicas.js';
import { createLogger } from '../src/platform/logger.js';
import { databaseEnv } from './support/database-env.js';

function adminUrl(): string {
  const url = process.env.TEST_POSTGRES_ADMIN_URL;
  if (!url) throw new Error('TEST_POSTGRES_ADMIN_URL is not set: run the tests through jest (global setup)');
  return url;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database cloned from the migrated template; dropped by `drop()`. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `gateway_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name} template ${process.env.TEST_TEMPLATE_DATABASE}`);
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => adminQuery(`drop database if exists ${name} with (force)`) };
}

export { databaseEnv } from './support/database-env.js';

export interface TestApp {
  app: FastifyInstance;
  orm: Orm;
  config: Config;
  databaseUrl: string;
  /** Every SQL statement the ORM sent since the last `sql.reset()`. */
  sql: { statements: string[]; reset(): void };
  rest(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Reads the database directly, outside the app (for asserting what was stored). */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  gql<TResult, TVariables>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables?: TVariables,
    headers?: Record<string, string>,
  ): Promise<FormattedExecutionResult<TResult>>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Reuse a database (another app's `databaseUrl`) instead of a fresh clone; it is not dropped on close. */
  databaseUrl?: string;
  env?: Record<string, string>;
  clock?: Clock;
  /** Run the job queue worker (webhooks, reminders); default true. */
  jobs?: boolean;
  /** Captures e-mail instead of SMTP_URL. */
  mailer?: Mailer;
  priceAdapters?: readonly PriceAdapter[];
}

/** Builds the real app on its own fresh database. Call `close()` in `afterAll`. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, name: '', drop: async () => {} }
    : await createTestDatabase();
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  // Generous rate limits unless a test is about them: every injected request comes from one address.
  const config = loadConfig({
    ...databaseEnv(database.url),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_ANON_PER_MIN: '100000',
    RATE_LIMIT_AUTH_PER_MIN: '100000',
    RATE_LIMIT_TOKENS_PER_MIN: '100000',
    AGENT_CREATE_PER_MIN: '100000',
    GRAPHQL_COST_PER_MIN: '1000000000',
    // A full run shares two cores with PostgreSQL and Chromium: a pool could wait longer than the 5 s
    // default for a connection. Tests about timeouts pass their own.
    DB_CONNECT_TIMEOUT_MS: '20000',
    // No adapter reaches the internet from a test; tests that want them pass their own.
    PRICE_PROVIDERS: '',
    // Every operation compiled by graphql-jit on its first request, so that every GraphQL test runs
    // the compiled path hot operations take (compiled-execution.test.ts compares it with graphql-js).
    GRAPHQL_JIT: '1',
    ...options.env,
  });
  const statements: string[] = [];
  const orm = await createOrm({
    clientUrl: config.databaseUrl!,
    entities,
    migrations,
    logger,
    timeouts: config.databaseTimeouts,
    pooling: config.databasePooling,
    replicas: namedReplicas(config.databaseReplicas.urls),
    onQuery: (sql) => statements.push(sql),
  });
  const app = await buildApp({
    config,
    orm,
    logger,
    databaseUrl: config.databaseUrl!,
    directDatabaseUrl: database.url,
    jobs: options.jobs ?? true,
    jobPollIntervalMs: 100,
    ...(options.mailer ? { mailer: options.mailer } : {}),
    ...(options.priceAdapters ? { priceAdapters: options.priceAdapters } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });

  // The test's own reads share a few connections: a connection per read (a backend started and a SCRAM
  // exchange each time) was 85 % of the generated-input suites' time.
  let readsPool: pg.Pool | undefined;
  const directReads = () => {
    if (!readsPool) {
      readsPool = new pg.Pool({ connectionString: database.url, max: 2, application_name: 'gateway-test-reads' });
      // A test that terminates backends or restarts PostgreSQL ends idle ones too: the pool drops them.
      readsPool.on('error', () => {});
    }
    return readsPool;
  };
  return {
    app,
    orm,
    config,
    databaseUrl: database.url,
    sql: {
      statements,
      reset: () => {
        statements.length = 0;
      },
    },
    rest: (injectOptions) => app.inject(injectOptions),
    async query<Row>(sql: string, params: unknown[] = []) {
      return (await directReads().query(sql, params)).rows as Row[];
    },
    async gql(document, variables, headers = {}) {
      const response = await app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'content-type': 'application/json', ...headers },
        payload: { query: print(document), variables: variables ?? {} },
      });
      return response.json();
    },
    async close() {
      await app.close();
      await orm.close(true);
      await readsPool?.end();
      await database.drop();
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const apiKey = (token: string) => ({ 'x-api-key': token });

/**
 * A GraphQL answer without its `extensions.cost` (every answer carries one, with the caller's budget
 * left, which moves with each request): for tests about everything else in it.
 */
export function withoutCost<T extends object>(body: T): T {
  const { extensions, ...rest } = body as { extensions?: Record<string, unknown> };
  if (!extensions || !('cost' in extensions)) return body;
  const { cost: _cost, ...others } = extensions;
  return (Object.keys(others).length > 0 ? { ...rest, extensions: others } : rest) as T;
}
