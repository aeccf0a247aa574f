import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { freePort } from '../../src/platform/db/embedded-postgres.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../factories/agents.js';
import { Mailbox } from '../factories/mailbox.js';
import { startServer } from '../factories/server-process.js';
import { signIn, submitTool } from '../factories/users.js';
import { bearer, createTestDatabase, startTestApp, type TestApp } from '../harness.js';

/** As test/pooler/global-setup.mjs has PgBouncer: server connections per database. */
const SERVER_CONNECTIONS = 6;

/**
 * What a server connection PgBouncer hands from client to client still holds once a transaction is
 * over: named statements, LISTEN registrations, session advisory locks, settings changed with SET
 * (`source = 'session'`). Each probe sleeps so that the probes at once take every server connection.
 */
const SESSION_STATE = `
  select pg_backend_pid() as pid,
         (select count(*)::int from pg_prepared_statements) as prepared,
         (select count(*)::int from pg_listening_channels()) as listening,
         (select count(*)::int from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()) as advisory_locks,
         (select coalesce(array_agg(name order by name), '{}') from pg_settings where source = 'session') as session_settings,
         pg_sleep(0.3)::text as slept`;

interface SessionState {
  pid: number;
  prepared: number;
  listening: number;
  advisory_locks: number;
  session_settings: string[];
}

describe('behind PgBouncer in transaction mode', () => {
  let a: TestApp;
  let b: TestApp;
  let root: AgentWithToken;
  const mailbox = new Mailbox();

  beforeAll(async () => {
    a = await startTestApp({ mailer: mailbox });
    b = await startTestApp({ databaseUrl: a.databaseUrl, jobs: false, mailer: mailbox });
    root = await bootstrapAgent(a);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('reaches PostgreSQL through the pooler for pooled work and directly for sessions', () => {
    expect(new URL(a.config.databaseUrl!).port).toBe(new URL(process.env.TEST_POOLER_URL!).port);
    expect(new URL(a.config.databaseDirectUrl!).port).not.toBe(new URL(process.env.TEST_POOLER_URL!).port);
    expect(a.config.databasePooling).toEqual({ mode: 'transaction', namedStatements: false });
  });

  it('leaves nothing on the shared server connections after every kind of write and read, on two processes at once', async () => {
    const agents = await Promise.all(Array.from({ length: 4 }, () => createAgent(a, root)));
    const user = await signIn(a, mailbox);
    const toolId = (await submitTool(a, user)).id;

    const work = agents.flatMap((agent, i) =>
      Array.from({ length: 6 }, (_, j) => {
        const app = (i + j) % 2 ? a : b;
        const startsAt = new Date(Date.UTC(2061, 0, 1 + i, 9 + j));
        const endsAt = new Date(startsAt.getTime() + 30 * 60_000);
        return [
          app.rest({ method: 'POST', url: '/api/bookings', headers: bearer(agent.token), payload: { agentId: agent.id, startsAt, endsAt } }),
          app.rest({ method: 'GET', url: '/api/bookings?from=2061-01-01T00:00:00Z&to=2061-02-01T00:00:00Z', headers: bearer(agent.token) }),
          app.rest({
            method: 'GET',
            url: '/api/availability?from=2061-01-01T00:00:00Z&to=2061-01-08T00:00:00Z&duration=30',
            headers: bearer(agent.token),
          }),
          app.rest({ method: 'POST', url: `/api/tools/${toolId}/vote`, headers: bearer(user.token) }),
        ];
      }),
    );
    const answers = await Promise.all(work.flat());
    expect(answers.filter((answer) => answer.statusCode >= 400).map((answer) => `${answer.statusCode} ${answer.body}`)).toEqual([]);

    const pooled = new pg.Pool({ connectionString: a.config.databaseUrl!, max: SERVER_CONNECTIONS });
    try {
      const probes = await Promise.all(Array.from({ length: SERVER_CONNECTIONS }, () => pooled.query<SessionState>(SESSION_STATE)));
      const states = probes.map((probe) => probe.rows[0]!);
      // Every server connection of the database was looked at, not one of them six times.
      expect(new Set(states.map((state) => state.pid)).size).toBe(SERVER_CONNECTIONS);
      for (const { prepared, listening, advisory_locks, session_settings } of states) {
        expect({ prepared, listening, advisory_locks, session_settings }).toEqual({ prepared: 0, listening: 0, advisory_locks: 0, session_settings: [] });
      }
    } finally {
      await pooled.end();
    }
  });

  it('refuses to start when the session timeouts through the pooler are not the DB_* settings, saying what to run', async () => {
    const database = await createTestDatabase();
    try {
      const server = startServer({ PORT: String(await freePort()), HOST: '127.0.0.1', DATABASE_URL: database.url, DB_STATEMENT_TIMEOUT_MS: '1234', PRICE_PROVIDERS: '' });
      expect(await server.exited).toBe(1);
      const fatal = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; err?: { message: string } })
        .find((entry) => entry.level === 60);
      expect(fatal?.err?.message).toMatch(/^DATABASE_POOL_MODE=transaction: the pooled connections run with statement_timeout=10000, not 1234 \(DB_STATEMENT_TIMEOUT_MS\)\./);
      expect(fatal?.err?.message).toContain(`ALTER ROLE "postgres" IN DATABASE "${database.name}" SET statement_timeout = 1234;`);
    } finally {
      await database.drop();
    }
  }, 60_000);
});
