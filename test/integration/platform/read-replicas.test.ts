import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../../src/platform/db/embedded-postgres.js';
import { startServer, type RunningServer } from '../../factories/server-process.js';
import { startSmtpServer } from '../../factories/smtp.js';
import { startStreamingReplica, type StreamingReplica } from '../../factories/streaming-replica.js';
import { createTestDatabase } from '../../harness.js';

const METRICS_TOKEN = 'metrics-token-for-replica-tests';
/**
 * The standby applies each commit this long after the primary made it (recovery_min_apply_delay):
 * a read it serves right after a write is stale for sure, so a gateway that sent such a read there
 * would be caught every time, not now and then.
 */
const APPLY_DELAY_MS = 300;
const MAX_LAG_MS = 2_000;
const ROUNDS = 30;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(base: string, method: string, path: string, options: { token?: string | undefined; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : { text } };
}

/** A counter's value in a Prometheus text exposition (0 when the series is absent). */
function metric(exposition: string, name: string, labels: string): number {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const slot = (day: number, hour: number) => {
  const startsAt = new Date(Date.UTC(2070, 0, 1 + day, hour));
  return { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 30 * 60_000).toISOString() };
};
const LIST = '/api/bookings?from=2070-01-01T00:00:00Z&to=2070-04-01T00:00:00Z&limit=100';
/** The caller's bookings overlapping one slot. */
const listAround = (booked: { startsAt: string; endsAt: string }) => `/api/bookings?from=${booked.startsAt}&to=${booked.endsAt}`;

describe('reads on a streaming replica, two gateway processes', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let replica: StreamingReplica;
  const servers: RunningServer[] = [];
  let a: string;
  let b: string;
  let root: { id: string; token: string };
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

  const start = async (): Promise<string> => {
    const port = await freePort();
    const server = startServer({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      DATABASE_REPLICA_URLS: replica.urlFor(database.name),
      DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      METRICS_TOKEN,
      SMTP_URL: smtp.url,
      PRICE_PROVIDERS: '',
      LOG_LEVEL: 'warn',
    });
    servers.push(server);
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${base}/readyz`).then((response) => response.ok, () => false))) {
      if (server.child.exitCode !== null || Date.now() > deadline) throw new Error(`the gateway did not start:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return base;
  };
  const metrics = async (base: string) => (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const replicaStatus = async (base: string) =>
    ((await call(base, 'GET', '/api/status')).body.services as { database: { replicas: { name: string; status: string; lag_ms: number | null; reason: string | null }[] } }).database.replicas[0]!;
  /** A directory user's session token, signed in through the magic link the SMTP server received. */
  const signIn = async (base: string): Promise<string> => {
    const email = `replica-${Date.now()}@example.com`;
    expect((await call(base, 'POST', '/api/auth/magic-link', { body: { email } })).status).toBe(200);
    let link: string | undefined;
    await until('the magic link arrives', async () => {
      link = smtp.mails.filter((mail) => mail.to.includes(email)).map((mail) => /token=([\w%-]+)/.exec(mail.text)?.[1]).find(Boolean);
      return link !== undefined;
    });
    const verified = await call(base, 'POST', '/api/auth/verify', { body: { token: decodeURIComponent(link!) } });
    return String(verified.body.token);
  };
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    const primaryDataDir = process.env.TEST_POSTGRES_DATA_DIR;
    if (!primaryDataDir) throw new Error('the replica tests copy the test run’s embedded PostgreSQL: run them without DATABASE_URL');
    database = await createTestDatabase();
    smtp = await startSmtpServer();
    replica = await startStreamingReplica({ primaryUrl: process.env.TEST_POSTGRES_ADMIN_URL!, primaryDataDir, applyDelayMs: APPLY_DELAY_MS });
    [a, b] = await Promise.all([start(), start()]);
    const made = await call(a, 'POST', '/api/agents', { body: { name: 'root', bootstrap: true } });
    root = { id: String(made.body.id), token: String(made.body.public_token) };
    await until('both gateways read from the replica', async () => (await replicaStatus(a)).status === 'operational' && (await replicaStatus(b)).status === 'operational');
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await replica?.destroy();
    await smtp?.close();
    await database?.drop();
  });

  it('never answers a stale read to the credential that just wrote, on either process, with or without its token', async () => {
    const writer = await call(a, 'POST', '/api/agents', { token: root.token, body: { name: 'writer' } });
    const agent = { id: String(writer.body.id), token: String(writer.body.public_token) };
    // A credential that never writes: no floor of its own, so the replica may answer it as soon as it serves.
    const quiet = await call(a, 'POST', '/api/agents', { token: root.token, body: { name: 'quiet reader' } });
    const quietToken = String(quiet.body.public_token);
    const before = await metrics(b);
    const stale: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [writeOn, readOn] = round % 2 ? [a, b] : [b, a];
      const created = await call(writeOn, 'POST', '/api/bookings', { token: agent.token, body: { agentId: agent.id, ...slot(round, 9) } });
      expect(created.status).toBe(201);
      const token = created.headers.get('x-consistency-token');
      expect(token).toMatch(/^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/);
      // Every third read sends the token back; the others rely on what the server remembers for the credential.
      const listed = await call(readOn, 'GET', LIST, { token: agent.token, ...(round % 3 === 0 ? { headers: { 'x-consistency-token': token! } } : {}) });
      expect(listed.status).toBe(200);
      const ids = (listed.body.items as { id: string }[]).map((item) => item.id);
      if (!ids.includes(String(created.body.id))) stale.push(`round ${round}: ${created.body.id} missing from ${readOn}`);
    }
    expect(stale).toEqual([]);

    // GraphQL: the mutation's token in extensions and header, the query on the other process sees it.
    const mutation = await call(a, 'POST', '/graphql', {
      token: agent.token,
      body: { query: 'mutation ($input: CreateBookingInput!) { createBooking(input: $input) { id } }', variables: { input: { agentId: agent.id, ...slot(ROUNDS, 9) } } },
    });
    const extensions = mutation.body.extensions as { consistencyToken?: string } | undefined;
    expect(extensions?.consistencyToken).toBe(mutation.headers.get('x-consistency-token'));
    const query = await call(b, 'POST', '/graphql', {
      token: agent.token,
      body: { query: '{ bookings(from: "2070-01-01T00:00:00Z", to: "2070-04-01T00:00:00Z", first: 100) { edges { node { id } } } }' },
    });
    const nodes = (query.body.data as { bookings: { edges: { node: { id: string } }[] } }).bookings.edges.map((edge) => edge.node.id);
    expect(nodes).toContain((mutation.body.data as { createBooking: { id: string } }).createBooking.id);

    // The writer's reads waited for the replica on the primary; a reader that wrote nothing gets the replica
    // (once it serves: under load a replica applying commits 300 ms late may be left out for a moment).
    const served = async (route: string) => metric(await metrics(b), 'gateway_db_replica_reads_total', `route="${route}"`) - metric(before, 'gateway_db_replica_reads_total', `route="${route}"`);
    expect(await served('replica_behind_floor')).toBeGreaterThan(0);
    for (let attempt = 0; attempt < 75; attempt++) {
      expect((await call(b, 'GET', LIST, { token: quietToken })).status).toBe(200);
      if ((await served('replica')) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await served('replica')).toBeGreaterThan(0);
  }, 60_000);

  it('answers a read with a client’s token from a replica only once it has replayed it, also for anonymous directory reads', async () => {
    // A stale replica is what others (without a token) may see, within the lag bound: the replica serves them.
    const user = await signIn(a);
    const submitted = await call(a, 'POST', '/api/tools', { token: user, body: { name: 'Replica tool', url: `https://replica-${Date.now()}.example.com`, description: 'Seen at once by whoever sends the token.', category_id: 1 } });
    expect(submitted.status).toBe(201);
    const token = submitted.headers.get('x-consistency-token')!;
    const listed = await call(b, 'GET', '/api/tools?sort=newest&limit=5', { headers: { 'x-consistency-token': token } });
    expect((listed.body.tools as { id: number }[]).map((tool) => tool.id)).toContain((submitted.body.tool as { id: number }).id);
  }, 30_000);

  it('leaves a replica out while it lags past the bound, and takes it back by itself', async () => {
    const paused = await replicaQuery('select pg_wal_replay_pause()');
    expect(paused).toBeDefined();
    try {
      // Writes move the primary on; the paused standby stays where it was.
      await until(
        'the replica is left out',
        async () => {
          await call(a, 'POST', '/api/agents', { token: root.token, body: { name: 'while paused' } });
          return (await replicaStatus(a)).status === 'degraded';
        },
        MAX_LAG_MS * 5,
      );
      const left = await replicaStatus(a);
      expect(left.reason).toMatch(/^lags \d+ ms, over DATABASE_REPLICA_MAX_LAG_MS \(2000\)$/);
      const before = await metrics(a);
      expect((await call(a, 'GET', LIST, { token: root.token })).status).toBe(200);
      const after = await metrics(a);
      expect(metric(after, 'gateway_db_replica_reads_total', 'route="no_replica_serving"')).toBe(metric(before, 'gateway_db_replica_reads_total', 'route="no_replica_serving"') + 1);
      expect(metric(after, 'gateway_db_replica_serving', 'replica="replica-1"')).toBe(0);
      expect(metric(after, 'gateway_db_replica_lag_seconds', 'replica="replica-1"')).toBeGreaterThan(MAX_LAG_MS / 1000);
    } finally {
      await replicaQuery('select pg_wal_replay_resume()');
    }
    await until('the replica serves again', async () => (await replicaStatus(a)).status === 'operational');
    const back = await replicaStatus(a);
    expect(back.lag_ms).toBeLessThanOrEqual(MAX_LAG_MS);
    expect(metric(await metrics(a), 'gateway_db_replica_serving', 'replica="replica-1"')).toBe(1);
  }, 60_000);

  it('answers every request while the replica is stopped and started under load: no 5xx, no stale read after a write', async () => {
    const agents = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const made = await call(b, 'POST', '/api/agents', { token: root.token, body: { name: `under load ${i}` } });
        return { id: String(made.body.id), token: String(made.body.public_token) };
      }),
    );
    const statuses = new Map<number, number>();
    const stale: string[] = [];
    let stop = false;
    const clients = agents.map(async (agent, c) => {
      for (let round = 0; !stop; round++) {
        const [writeOn, readOn] = round % 2 ? [a, b] : [b, a];
        const booked = slot(40 + round, c);
        const created = await call(writeOn, 'POST', '/api/bookings', { token: agent.token, body: { agentId: agent.id, ...booked } }).catch(() => ({ status: 0, body: {} }) as Answer);
        statuses.set(created.status, (statuses.get(created.status) ?? 0) + 1);
        const listed = await call(readOn, 'GET', listAround(booked), { token: agent.token }).catch(() => ({ status: 0, body: {} }) as Answer);
        statuses.set(listed.status, (statuses.get(listed.status) ?? 0) + 1);
        if (created.status === 201 && listed.status === 200 && !(listed.body.items as { id: string }[]).some((item) => item.id === created.body.id)) stale.push(String(created.body.id));
        const others = await call(readOn, 'GET', LIST, { token: root.token }).catch(() => ({ status: 0, body: {} }) as Answer);
        statuses.set(others.status, (statuses.get(others.status) ?? 0) + 1);
      }
    });
    let servedBefore: number;
    // A failed expectation must stop the clients too, or their loop keeps jest from ever finishing.
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await replica.stop();
      await until('both gateways left the stopped replica out', async () => (await replicaStatus(a)).status === 'down' && (await replicaStatus(b)).status === 'down');
      // A code, never the driver's message: that names the replica's address, and the report is public.
      for (const base of [a, b]) {
        const report = await call(base, 'GET', '/api/status');
        expect(JSON.stringify(report.body)).not.toContain(`127.0.0.1:${replica.port}`);
        expect((await replicaStatus(base)).reason).toMatch(/^(unreachable|a read failed) \((ECONNREFUSED|ECONNRESET|57P01|57P03|08006|08001|no answer in time|connection failed)\)$/);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await replica.start();
      await until('both gateways read from the replica again', async () => (await replicaStatus(a)).status === 'operational' && (await replicaStatus(b)).status === 'operational');
      servedBefore = metric(await metrics(a), 'gateway_db_replica_reads_total', 'route="replica"');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    } finally {
      stop = true;
      await Promise.all(clients);
    }
    expect([...statuses.keys()].sort()).toEqual([200, 201]);
    expect(stale).toEqual([]);
    expect(metric(await metrics(a), 'gateway_db_replica_reads_total', 'route="replica"')).toBeGreaterThan(servedBefore);
  }, 90_000);

  /** A statement on the standby itself, as its superuser. */
  async function replicaQuery(sql: string): Promise<unknown> {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: replica.urlFor('postgres') });
    await client.connect();
    try {
      return (await client.query(sql)).rows[0];
    } finally {
      await client.end();
    }
  }
});
