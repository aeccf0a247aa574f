/**
 * `npm run bench`: throughput and latency of the gateway, measured against the built server
 * (`dist/`) running as its own process on a throwaway embedded PostgreSQL (or DATABASE_URL).
 * Load comes from autocannon in this process; the numbers are printed as a table and as JSON.
 *
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=50 npm run bench
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { freePort, startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { createLogger } from '../../src/platform/logger.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Agent {
  id: string;
  token: string;
}

interface Row {
  scenario: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non2xx: number;
  errors: number;
}

async function startServer(): Promise<{ base: string; databaseUrl: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
  // The database runs here rather than inside the server so the demo seeder can share it.
  const database = await startEmbeddedPostgres({ dataDir, logger: createLogger('warn') });
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      BOOKING_CAP: '100000000',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // Limits stay on (their PostgreSQL round trip is part of every directory request) but never bite.
      RATE_LIMIT_ANON_PER_MIN: '1000000000',
      RATE_LIMIT_AUTH_PER_MIN: '1000000000',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error('the server exited during start-up; run `npm run build` first');
    const ready = await fetch(`${base}/readyz`).then((response) => response.ok, () => false);
    if (ready) break;
    if (attempt > 600) throw new Error('the server did not become ready within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base,
    databaseUrl: database.url,
    async stop() {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await database.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function post(base: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

async function createAgents(base: string, count: number): Promise<Agent[]> {
  const root = await post(base, '/api/agents', { name: 'bench-root', bootstrap: true });
  const rootToken = root.body.public_token!;
  const agents: Agent[] = [];
  for (let i = 0; i < count; i++) {
    const created = await post(base, '/api/agents', { name: `bench-${i}` }, rootToken);
    agents.push({ id: created.body.id!, token: created.body.public_token! });
  }
  return agents;
}

function summarise(scenario: string, result: autocannon.Result): Row {
  return {
    scenario,
    requests: result.requests.total,
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function benchCreateBookings(base: string, agents: Agent[]): Promise<Row> {
  // Every request books a fresh minute on one of the agents' calendars, so all of them should succeed.
  let counter = 0;
  const start = Date.parse('2031-01-01T00:00:00Z');
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        path: '/api/bookings',
        setupRequest: (request) => {
          const n = counter++;
          const agent = agents[n % agents.length]!;
          const startsAt = new Date(start + Math.floor(n / agents.length) * 60_000);
          return {
            ...request,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
            body: JSON.stringify({ agentId: agent.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 60_000).toISOString() }),
          };
        },
      },
    ],
  });
  return summarise('POST /api/bookings', result);
}

async function benchListBookings(base: string, agent: Agent): Promise<Row> {
  for (let i = 0; i < 50; i++) {
    const startsAt = new Date(Date.parse('2032-01-01T00:00:00Z') + i * 3_600_000);
    await post(base, '/api/bookings', { agentId: agent.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() }, agent.token);
  }
  const result = await autocannon({
    url: `${base}/api/bookings?limit=50&from=2032-01-01T00:00:00Z`,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${agent.token}` },
  });
  return summarise('GET /api/bookings (50 items)', result);
}

/** The race the exclusion constraint and the agent lock settle: many creates of one slot at once. */
async function raceOneSlot(base: string, agent: Agent, contenders: number) {
  const started = performance.now();
  const responses = await Promise.all(
    Array.from({ length: contenders }, () =>
      post(base, '/api/bookings', { agentId: agent.id, startsAt: '2033-01-01T10:00:00Z', endsAt: '2033-01-01T11:00:00Z' }, agent.token),
    ),
  );
  const count = (status: number) => responses.filter((response) => response.status === status).length;
  return {
    contenders,
    created: count(201),
    slot_taken: responses.filter((response) => response.status === 409 && response.body.error === 'slot_taken').length,
    server_errors: responses.filter((response) => response.status >= 500).length,
    wall_ms: Math.round(performance.now() - started),
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * 1,000 booking events: latency from the event's creation inside the committing transaction to a
 * graphql-ws subscriber, and how fast the job queue delivers the same events to a webhook receiver.
 */
async function benchEvents(base: string, agent: Agent, count = 1000) {
  const receivedAt = new Map<string, number>();
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      receivedAt.set(String(request.headers['webhook-id']), performance.timeOrigin + performance.now());
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  await post(base, '/api/webhooks', { url: receiverUrl, events: ['booking.created'] }, agent.token);

  const latencies: number[] = [];
  const client = createClient({ url: `${base.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${agent.token}` } });
  let done!: () => void;
  const allSeen = new Promise<void>((resolve) => (done = resolve));
  client.subscribe<{ bookingEvents: { createdAt: string } }>(
    { query: 'subscription { bookingEvents { cursor createdAt } }' },
    {
      next: (value) => {
        latencies.push(performance.timeOrigin + performance.now() - Date.parse(value.data!.bookingEvents.createdAt));
        if (latencies.length === count) done();
      },
      error: (error) => console.error(error),
      complete: () => undefined,
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 500));

  const started = performance.timeOrigin + performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < count) {
        const n = next++;
        const startsAt = new Date(Date.parse('2034-01-01T00:00:00Z') + n * 3_600_000);
        await post(base, '/api/bookings', { agentId: agent.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() }, agent.token);
      }
    }),
  );
  await allSeen;
  while (receivedAt.size < count) await new Promise((resolve) => setTimeout(resolve, 50));
  const lastDelivery = Math.max(...receivedAt.values());
  await client.dispose();
  await new Promise((resolve) => receiver.close(resolve));

  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    events: count,
    subscriber_p50_ms: Number(percentile(sorted, 50).toFixed(1)),
    subscriber_p99_ms: Number(percentile(sorted, 99).toFixed(1)),
    webhook_deliveries_per_s: Math.round(count / ((lastDelivery - started) / 1000)),
  };
}

/** `GET /api/tools?sort=trending` over a seeded directory (10,000 tools, 200,000 votes by default). */
async function benchTrending(base: string, databaseUrl: string): Promise<{ rows: Row[]; seeded: string }> {
  const tools = process.env.BENCH_TOOLS ?? '10000';
  const votes = process.env.BENCH_VOTES ?? '200000';
  const { stdout } = await promisify(execFile)(process.execPath, ['dist/src/cli/seed-demo.js', '--tools', tools, '--votes', votes, '--voters', '5000'], {
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
  });
  const url = `${base}/api/tools?sort=trending&limit=20`;
  const single = await autocannon({ url, connections: 1, duration: Math.min(SECONDS, 5) });
  const loaded = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
  return {
    rows: [
      summarise(`GET /api/tools?sort=trending, 1 connection (${tools} tools, ${votes} votes)`, single),
      summarise(`GET /api/tools?sort=trending, ${CONNECTIONS} connections`, loaded),
    ],
    seeded: stdout.trim(),
  };
}

/** `GET /api/v1/prices`: served from memory between snapshots. */
async function benchPrices(base: string): Promise<Row> {
  const result = await autocannon({ url: `${base}/api/v1/prices`, connections: CONNECTIONS, duration: SECONDS });
  return summarise('GET /api/v1/prices (37 rows, from memory)', result);
}

const server = await startServer();
try {
  const agents = await createAgents(server.base, 50);
  const rows = [await benchCreateBookings(server.base, agents), await benchListBookings(server.base, agents[0]!), await benchPrices(server.base)];
  const race = await raceOneSlot(server.base, agents[1]!, 200);
  const events = await benchEvents(server.base, agents[2]!);
  const trending = await benchTrending(server.base, server.databaseUrl);
  rows.push(...trending.rows);
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s per scenario, server: node dist/src/main.js on embedded PostgreSQL\n`);
  console.table(rows);
  console.log('200 simultaneous creates of one slot:');
  console.table([race]);
  console.log('1,000 booking events (10 writers): commit → graphql-ws subscriber, and webhook delivery rate:');
  console.table([events]);
  console.log(trending.seeded);
  console.log(JSON.stringify({ rows, race, events }));
} finally {
  await server.stop();
}
