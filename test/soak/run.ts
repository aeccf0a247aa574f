/**
 * `npm run soak`: two gateway processes (`node dist/src/main.js`) on one PostgreSQL under mixed traffic
 * for SOAK_SECONDS (600 by default; CI runs 60): bookings, recurring bookings, proposals with accepts,
 * directory reads and votes, token reads against a local screener, 200 graphql-ws subscribers spread
 * over both processes and 20 webhook receivers. At the end it checks, and exits non-zero otherwise:
 *   - no 5xx and no failed request;
 *   - each process's heap (after a full GC, read through the inspector) at the end is at most 1.1× its
 *     heap at minute 2 (judged on runs of 5 minutes or more; shorter runs report it);
 *   - every subscriber got every event of its agent once, in order;
 *   - every event reached its agent's webhook receiver at least once, and twice only after a failed or
 *     cut-off attempt (duplicates counted);
 *   - the invariants hold: no overlapping confirmed slots, `vote_count` equals the vote rows, every
 *     accepted proposal's booking on the proposer's calendar, no agent over the booking cap.
 *   - no read by a credential misses that credential's last acknowledged write: every bookings list an
 *     agent reads covers its last booking created (201, or a createBooking without errors) before the
 *     read started, and must show it unless the primary says it left the calendar meanwhile;
 *   - with a replica: the replica served reads, and was never left out.
 * Environment: SOAK_SECONDS, SOAK_CONCURRENCY (8), DATABASE_URL (instead of an embedded cluster),
 * SOAK_PROCESSES (2), SOAK_POOLER=1 (the last process reaches PostgreSQL through PgBouncer in
 * transaction mode, its sessions directly; needs pgbouncer), SOAK_REPLICA=1 (a streaming replica of the
 * cluster, made as test/factories/streaming-replica.ts does, serves every process's replica reads).
 * The pooler and the replica need the soak's own embedded cluster. The deployment the README reports:
 * SOAK_PROCESSES=3 SOAK_POOLER=1 SOAK_REPLICA=1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/platform/db/embedded-postgres.js';
import { createLogger } from '../../src/platform/logger.js';
import { MINT, pair, startFakeScreener } from '../factories/fake-screener.js';
import { startSmtpServer } from '../factories/smtp.js';
import { startStreamingReplica, type StreamingReplica } from '../factories/streaming-replica.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.mjs';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
if (!Number.isInteger(SECONDS) || SECONDS < 30) throw new Error('SOAK_SECONDS must be a whole number of at least 30');
const PROCESSES = Number(process.env.SOAK_PROCESSES ?? 2);
if (!Number.isInteger(PROCESSES) || PROCESSES < 1 || PROCESSES > 6) throw new Error('SOAK_PROCESSES must be a whole number from 1 to 6');
const THROUGH_POOLER = process.env.SOAK_POOLER === '1';
const WITH_REPLICA = process.env.SOAK_REPLICA === '1';
if ((THROUGH_POOLER || WITH_REPLICA) && process.env.DATABASE_URL) throw new Error('SOAK_POOLER and SOAK_REPLICA need the soak’s own embedded PostgreSQL: unset DATABASE_URL');
const METRICS_TOKEN = 'soak-metrics-token-0123456789';
/** The session timeouts as config.ts defaults them: behind a transaction pooler they are the role's (db/pooling.ts). */
const ROLE_DEFAULTS = { statement_timeout: 10_000, lock_timeout: 5_000, idle_in_transaction_session_timeout: 30_000 };
const AGENTS = 20;
const SUBSCRIBERS_PER_AGENT = 10;
const USERS = 5;
const BOOKING_CAP = 300;
/** When the first heap figure is taken: minute 2, or a third of a shorter run. */
const EARLY_HEAP_AT_S = Math.min(120, Math.floor(SECONDS / 3));
const HEAP_GROWTH_LIMIT = 1.1;
/**
 * Runs shorter than this report the heap but do not judge it: at 20 s of a 60-second run the process
 * is still warming up, and 10 % of 70 MB is within one collection's noise.
 */
const HEAP_JUDGED_FROM_S = 300;
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const problems: string[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const note = (line: string) => console.log(`  · ${line}`);

// ---------------------------------------------------------------------------------------------------
// Processes

interface Gateway {
  name: string;
  base: string;
  child: ChildProcess;
  inspector: string;
}

const children: ChildProcess[] = [];

async function startGateway(name: string, env: Record<string, string>): Promise<Gateway> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', 'dist/src/main.js'], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '', NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (!chunk.toString().startsWith('Debugger') && !chunk.toString().startsWith('For help')) process.stderr.write(chunk);
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (!(await fetch(`${base}/readyz`).then((response) => response.ok, () => false))) {
    if (child.exitCode !== null) throw new Error(`${name} exited during start-up`);
    if (Date.now() > deadline) throw new Error(`${name} did not become ready within 120 s`);
    await sleep(100);
  }
  const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
  if (!inspector) throw new Error(`${name}: no inspector address in its output`);
  return { name, base, child, inspector };
}

/** The process's heap in use after a full collection, through the inspector protocol (no code in the server). */
async function heapAfterGc(gateway: Gateway): Promise<number> {
  const socket = new WebSocket(gateway.inspector);
  await once(socket, 'open');
  let id = 0;
  const call = (method: string) =>
    new Promise<Record<string, number>>((resolve, reject) => {
      const mine = ++id;
      const onMessage = (data: WebSocket.RawData) => {
        const message = JSON.parse(data.toString()) as { id?: number; result?: Record<string, number>; error?: unknown };
        if (message.id !== mine) return;
        socket.off('message', onMessage);
        if (message.error) reject(new Error(JSON.stringify(message.error)));
        else resolve(message.result ?? {});
      };
      socket.on('message', onMessage);
      socket.send(JSON.stringify({ id: mine, method }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    return (await call('Runtime.getHeapUsage')).usedSize!;
  } finally {
    socket.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Traffic

interface Agent {
  id: string;
  token: string;
}

const statuses = new Map<string, number>();
function count(route: string, status: number | 'failed'): void {
  const key = `${route} ${status}`;
  statuses.set(key, (statuses.get(key) ?? 0) + 1);
  if (status === 'failed' || status >= 500) {
    if (problems.length < 50) problems.push(`${route} answered ${status}`);
  }
}

type Answer = Record<string, unknown> & { errors?: { extensions?: { code?: string } }[] };

/** Each agent's last booking created, and when its creation was acknowledged. */
const lastBooked = new Map<string, { id: string; startsAt: string; endsAt: string; ackedAt: number }>();
const readsChecked = { reads: 0, stale: 0, leftCalendar: 0 };
let primaryForChecks: pg.Pool | undefined;

function booked(agent: Agent, id: string, startsAt: Date, endsAt: Date): void {
  lastBooked.set(agent.id, { id, startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString(), ackedAt: performance.now() });
}

/**
 * A bookings list by `agent` that started after its last booking was acknowledged must show that
 * booking, unless it left the calendar meanwhile (a proposal accepted by another agent moved it, or
 * it was cancelled): the primary decides.
 */
async function readOwnCalendar(gateway: Gateway, agent: Agent): Promise<void> {
  const expected = lastBooked.get(agent.id);
  const path = expected
    ? `/api/bookings?from=${expected.startsAt}&to=${expected.endsAt}&limit=50`
    : '/api/bookings?from=2040-01-01T00:00:00Z&to=2040-04-01T00:00:00Z&limit=50';
  const listed = await call(gateway, 'GET /api/bookings', 'GET', path, agent.token);
  if (!expected || listed.status !== 200) return;
  readsChecked.reads++;
  if ((listed.body.items as { id: string }[]).some((item) => item.id === expected.id)) return;
  const { rows } = await primaryForChecks!.query<{ agent_id: string; status: string }>('select agent_id, status from bookings where id = $1', [expected.id]);
  if (rows[0]?.agent_id === agent.id && rows[0].status === 'confirmed') {
    readsChecked.stale++;
    if (problems.length < 50) problems.push(`${gateway.name} answered ${agent.id} a list without its booking ${expected.id}, acknowledged before the read`);
  } else {
    readsChecked.leftCalendar++;
  }
}

async function call(gateway: Gateway, route: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: Answer }> {
  try {
    const response = await fetch(`${gateway.base}${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    count(route, response.status);
    return { status: response.status, body: text ? (JSON.parse(text) as Answer) : {} };
  } catch (error) {
    count(route, 'failed');
    return { status: 0, body: { error: String(error) } };
  }
}

/** What a healthy server may refuse a random weekly series with; anything else (unavailable, internal) is a problem. */
const EXPECTED_REFUSALS = new Set(['booking_cap_reached', 'slot_taken']);

const random = (n: number) => Math.floor(Math.random() * n);
/** A random whole hour in 2040–2049: creates mostly succeed, and sometimes overlap (409). */
const randomHour = () => new Date(Date.UTC(2040, 0, 1) + random(10 * 365 * 24) * 3_600_000);

async function oneOperation(gateways: Gateway[], agents: Agent[], users: { token: string }[], toolIds: number[]): Promise<void> {
  const gateway = gateways[random(gateways.length)]!;
  const agent = agents[random(agents.length)]!;
  const roll = random(100);
  if (roll < 30) {
    const startsAt = randomHour();
    const endsAt = new Date(startsAt.getTime() + 1_800_000);
    const created = await call(gateway, 'POST /api/bookings', 'POST', '/api/bookings', agent.token, {
      agentId: agent.id,
      startsAt: startsAt.toISOString(),
      endsAt: endsAt.toISOString(),
    });
    if (created.status === 201) booked(agent, String(created.body.id), startsAt, endsAt);
  } else if (roll < 40) {
    // Recurring bookings come through GraphQL only (seed 000's REST body has no rrule).
    const startsAt = randomHour();
    const created = await call(gateway, 'POST /graphql createBooking (weekly ×4)', 'POST', '/graphql', agent.token, {
      query: 'mutation ($input: CreateBookingInput!) { createBooking(input: $input) { id } }',
      variables: { input: { agentId: agent.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString(), rrule: 'FREQ=WEEKLY;COUNT=4' } },
    });
    const code = created.body.errors?.[0]?.extensions?.code;
    const made = (created.body.data as { createBooking?: { id: string } } | undefined)?.createBooking;
    if (!code && made) booked(agent, made.id, startsAt, new Date(startsAt.getTime() + 1_800_000));
    if (code) {
      statuses.set(`GraphQL error ${code}`, (statuses.get(`GraphQL error ${code}`) ?? 0) + 1);
      if (!EXPECTED_REFUSALS.has(code) && problems.length < 50) problems.push(`createBooking answered ${JSON.stringify(created.body.errors?.[0])}`);
    }
  } else if (roll < 50) {
    const target = agents[(agents.indexOf(agent) + 1 + random(agents.length - 1)) % agents.length]!;
    const startsAt = randomHour();
    const proposed = await call(gateway, 'POST /api/proposals', 'POST', '/api/proposals', agent.token, {
      targetAgentId: target.id,
      startsAt: startsAt.toISOString(),
      endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString(),
    });
    if (proposed.status === 201) {
      const other = gateways[random(gateways.length)]!;
      await call(other, 'PATCH /api/proposals/:id/accept', 'PATCH', `/api/proposals/${String(proposed.body.id)}/accept`, target.token);
    }
  } else if (roll < 65) {
    await readOwnCalendar(gateway, agent);
  } else if (roll < 80) {
    await call(gateway, 'GET /api/tools', 'GET', '/api/tools?sort=votes', users[random(users.length)]!.token);
  } else if (roll < 90) {
    await call(gateway, 'POST /api/tools/:id/vote', 'POST', `/api/tools/${toolIds[random(toolIds.length)]}/vote`, users[random(users.length)]!.token);
  } else {
    await call(gateway, 'GET /v1/tokens/:mint/analytics', 'GET', `/v1/tokens/${MINT}/analytics`, agent.token);
  }
}

// ---------------------------------------------------------------------------------------------------
// Main

interface Subscriber {
  agent: Agent;
  cursors: string[];
  errors: string[];
}

async function main(): Promise<void> {
  const started = performance.now();
  const topology = [`${PROCESSES} gateway process${PROCESSES === 1 ? '' : 'es'}`, ...(THROUGH_POOLER ? ['the last through PgBouncer (transaction mode)'] : []), ...(WITH_REPLICA ? ['a streaming replica serving reads'] : [])];
  console.log(`soak: ${SECONDS} s, ${CONCURRENCY} clients, ${topology.join(', ')}, ${AGENTS * SUBSCRIBERS_PER_AGENT} subscribers, ${AGENTS} webhook receivers`);
  let dataDir: string | undefined;
  let database: EmbeddedDatabase | undefined;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-soak-'));
    database = await startEmbeddedPostgres({ dataDir, logger: createLogger('warn'), ephemeral: true });
    databaseUrl = database.url;
  }
  let pooler: PgBouncer | undefined;
  let replica: StreamingReplica | undefined;
  const smtp = await startSmtpServer();
  const screener = await startFakeScreener({ [MINT]: [pair()] });
  const received: { agentId: string; webhookId: string }[] = [];
  const receivers: Server[] = [];
  const clients: Client[] = [];
  const gateways: Gateway[] = [];
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // An idle connection the server drops (a restart, an operator) must not end the run: pg emits it on the pool.
  db.on('error', (error) => note(`soak database pool: ${error.message}`));
  primaryForChecks = db;
  const replicaWatch = { samples: 0, maxLagMs: 0, lags: [] as number[], leftOut: [] as string[] };
  /** Client connections PostgreSQL held, sampled every second of the run (the most seen). */
  let peakConnections = 0;
  let watching = true;
  try {
    const databaseName = new URL(databaseUrl).pathname.slice(1);
    if (THROUGH_POOLER) {
      // Behind a transaction pooler the session timeouts are the role's defaults (the gateway checks them at start).
      for (const [setting, value] of Object.entries(ROLE_DEFAULTS)) await db.query(`alter role current_user in database "${databaseName}" set ${setting} = ${value}`);
      pooler = await startPgBouncer({ serverUrl: databaseUrl, poolSize: 10 });
    }
    if (WITH_REPLICA) replica = await startStreamingReplica({ primaryUrl: databaseUrl, primaryDataDir: join(dataDir!, 'pg') });
    const env = {
      DATABASE_URL: databaseUrl,
      ...(replica ? { DATABASE_REPLICA_URLS: replica.urlFor(databaseName) } : {}),
      METRICS_TOKEN,
      SMTP_URL: smtp.url,
      SCREENER_URL: screener.url,
      PUBLIC_URL: 'http://soak.example.com',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      PRICE_PROVIDERS: '',
      BOOKING_CAP: String(BOOKING_CAP),
      RATE_LIMIT_ANON_PER_MIN: '1000000',
      RATE_LIMIT_AUTH_PER_MIN: '1000000',
      RATE_LIMIT_TOKENS_PER_MIN: '1000000',
      // Proposals between the same 20 agents pile up for the whole run; the fan-out bounds are not what it soaks.
      AGENT_CREATE_PER_MIN: '1000000',
      AGENT_FAMILY_MAX: '1000000',
      PENDING_PROPOSALS_MAX: '1000000',
      LOG_LEVEL: 'warn',
      GRAPHQL_EXPLORER: 'false',
    };
    // One after the other: the first applies the migrations.
    for (let i = 0; i < PROCESSES; i++) {
      const name = `gateway-${String.fromCharCode(97 + i)}`;
      const pooled = pooler && i === PROCESSES - 1 ? { DATABASE_URL: pooler.urlFor(databaseName), DATABASE_DIRECT_URL: databaseUrl, DATABASE_POOL_MODE: 'transaction' } : {};
      gateways.push(await startGateway(pooled.DATABASE_URL ? `${name} (PgBouncer)` : name, { ...env, ...pooled }));
    }
    const [a] = gateways as [Gateway, ...Gateway[]];
    // What each process's status report says of the replica, and PostgreSQL's connections, every second of the run.
    const watcher = (async () => {
      while (watching) {
        const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where backend_type = 'client backend'`).catch(() => ({ rows: [{ n: 0 }] }));
        peakConnections = Math.max(peakConnections, rows[0]!.n);
        for (const gateway of replica ? gateways : []) {
          const report = await fetch(`${gateway.base}/api/status`).then((response) => response.json() as Promise<{ services: { database: { replicas: { status: string; lag_ms: number | null; reason: string | null }[] } } }>, () => undefined);
          const seen = report?.services.database.replicas[0];
          if (!seen) continue;
          replicaWatch.samples++;
          replicaWatch.maxLagMs = Math.max(replicaWatch.maxLagMs, seen.lag_ms ?? 0);
          replicaWatch.lags.push(seen.lag_ms ?? 0);
          if (seen.status !== 'operational' && replicaWatch.leftOut.length < 10) replicaWatch.leftOut.push(`${gateway.name}: ${seen.status} (${seen.reason})`);
        }
        await sleep(1000);
      }
    })();

    const root = await call(a, 'setup', 'POST', '/api/agents', undefined, { name: 'root', bootstrap: true });
    const rootToken = String(root.body.public_token);
    const agents: Agent[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const made = await call(a, 'setup', 'POST', '/api/agents', rootToken, { name: `soak-${i}` });
      agents.push({ id: String(made.body.id), token: String(made.body.public_token) });
    }
    for (const agent of agents) {
      const receiver = createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          received.push({ agentId: agent.id, webhookId: String(request.headers['webhook-id']) });
          response.statusCode = 204;
          response.end();
        });
      });
      receiver.listen(0, '127.0.0.1');
      await once(receiver, 'listening');
      receivers.push(receiver);
      await call(a, 'setup', 'POST', '/api/webhooks', agent.token, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
    }
    const users: { token: string }[] = [];
    for (let i = 0; i < USERS; i++) {
      const email = `soak-${i}@example.com`;
      await call(a, 'setup', 'POST', '/api/auth/magic-link', undefined, { email });
      let token: string | undefined;
      for (let tries = 0; !token && tries < 100; tries++) {
        await sleep(50);
        const link = smtp.mails.filter((mail) => mail.to.includes(email)).map((mail) => /token=([\w%-]+)/.exec(mail.text)?.[1]).find(Boolean);
        if (link) token = decodeURIComponent(link);
      }
      const verified = await call(a, 'setup', 'POST', '/api/auth/verify', undefined, { token });
      users.push({ token: String(verified.body.token) });
    }
    const toolIds: number[] = [];
    for (let i = 0; i < 10; i++) {
      const submitted = await call(a, 'setup', 'POST', '/api/tools', users[i % USERS]!.token, {
        name: `Soak tool ${i}`,
        url: `https://soak-tool-${i}.example.com`,
        description: 'A tool the soak votes on.',
        category_id: 1,
      });
      toolIds.push((submitted.body.tool as { id: number }).id);
    }

    const subscribers: Subscriber[] = [];
    for (const [index, agent] of agents.entries()) {
      for (let s = 0; s < SUBSCRIBERS_PER_AGENT; s++) {
        const gateway = gateways[(index * SUBSCRIBERS_PER_AGENT + s) % gateways.length]!;
        const subscriber: Subscriber = { agent, cursors: [], errors: [] };
        subscribers.push(subscriber);
        const client = createClient({
          url: `${gateway.base.replace('http', 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          connectionParams: { authorization: `Bearer ${agent.token}` },
          retryAttempts: 0,
          lazy: false,
          onNonLazyError: (error) => void subscriber.errors.push(String(error)),
        });
        clients.push(client);
        client.subscribe<{ bookingEvents: { cursor: string } }>(
          { query: 'subscription { bookingEvents { cursor } }' },
          {
            next: (value) => (value.data ? void subscriber.cursors.push(value.data.bookingEvents.cursor) : void subscriber.errors.push(JSON.stringify(value.errors))),
            error: (error) => void subscriber.errors.push(JSON.stringify(error)),
            complete: () => undefined,
          },
        );
      }
    }
    await sleep(2000);
    note(`set up: ${AGENTS} agents with a webhook each, ${USERS} users, ${toolIds.length} tools, ${subscribers.length} subscriptions`);

    // Traffic, with the early heap figure taken along the way.
    const walAt = async () => BigInt((await db.query<{ bytes: string }>(`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint::text as bytes`)).rows[0]!.bytes);
    const walBefore = await walAt();
    const trafficStarted = Date.now();
    const until = trafficStarted + SECONDS * 1000;
    let early: number[] | undefined;
    const heapProbe = (async () => {
      await sleep(EARLY_HEAP_AT_S * 1000);
      early = [];
      for (const gateway of gateways) early.push(await heapAfterGc(gateway));
      note(`heap after ${EARLY_HEAP_AT_S} s: ${early.map((bytes) => `${(bytes / 1e6).toFixed(1)} MB`).join(', ')}`);
    })();
    let requests = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < until) {
          await oneOperation(gateways, agents, users, toolIds);
          requests++;
        }
      }),
    );
    await heapProbe;
    note(`traffic: ${requests} operations in ${SECONDS} s`);
    const walBytes = Number((await walAt()) - walBefore);
    watching = false;
    await watcher;
    // Where each process's replica reads went (gateway_db_replica_reads_total, by route).
    const replicaReads = await Promise.all(
      gateways.map(async (gateway) => {
        const exposition = await fetch(`${gateway.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((response) => response.text());
        const routes = new Map<string, number>();
        for (const match of exposition.matchAll(/^gateway_db_replica_reads_total\{route="(\w+)"\} (\d+)/gm)) routes.set(match[1]!, Number(match[2]));
        return routes;
      }),
    );

    // Let deliveries and subscriptions catch up.
    const { rows: events } = await db.query<{ id: string; agent_id: string }>('select e.id::text as id, e.agent_id from booking_events e order by e.id');
    const eventsOf = new Map<string, string[]>();
    for (const event of events) eventsOf.set(event.agent_id, [...(eventsOf.get(event.agent_id) ?? []), event.id]);
    const delivered = () => new Set(received.map((hit) => hit.webhookId)).size;
    const caughtUp = () => delivered() >= events.length && subscribers.every((s) => s.cursors.length >= (eventsOf.get(s.agent.id)?.length ?? 0));
    const drainDeadline = Date.now() + 60_000;
    while (!caughtUp() && Date.now() < drainDeadline) await sleep(200);
    const end: number[] = [];
    for (const gateway of gateways) end.push(await heapAfterGc(gateway));

    // Checks.
    let subscribersOk = 0;
    for (const subscriber of subscribers) {
      const expected = eventsOf.get(subscriber.agent.id) ?? [];
      const ok = subscriber.errors.length === 0 && subscriber.cursors.length === expected.length && subscriber.cursors.every((cursor, i) => cursor === expected[i]);
      if (ok) subscribersOk++;
      else if (problems.length < 50) {
        const differs = expected.findIndex((cursor, i) => subscriber.cursors[i] !== cursor);
        problems.push(
          `a subscriber of ${subscriber.agent.id} got ${subscriber.cursors.length} of ${expected.length} events; first difference at ${differs}: ` +
            `got ${subscriber.cursors[differs]}, expected ${expected[differs]} (errors: ${subscriber.errors.slice(0, 2).join('; ')})`,
        );
      }
    }
    const webhookIds = received.map((hit) => hit.webhookId);
    const duplicates = webhookIds.length - new Set(webhookIds).size;
    const missing = events.filter((event) => !webhookIds.includes(`evt_${event.id}`)).length;
    if (missing > 0) problems.push(`${missing} of ${events.length} events never reached their webhook receiver`);
    for (const [i, gateway] of gateways.entries()) {
      if (SECONDS >= HEAP_JUDGED_FROM_S && early && end[i]! > early[i]! * HEAP_GROWTH_LIMIT) {
        problems.push(`${gateway.name}: heap grew from ${(early[i]! / 1e6).toFixed(1)} MB to ${(end[i]! / 1e6).toFixed(1)} MB`);
      }
    }
    const invariants = await db.query<{ overlaps: number; vote_mismatches: number; misplaced_accepts: number; over_cap: number }>(
      `select
         (select count(*)::int from booking_slots x join booking_slots y
             on x.agent_id = y.agent_id and x.ctid < y.ctid and tstzrange(x.starts_at, x.ends_at) && tstzrange(y.starts_at, y.ends_at)
           join bookings bx on bx.id = x.booking_id and bx.status = 'confirmed'
           join bookings by on by.id = y.booking_id and by.status = 'confirmed') as overlaps,
         (select count(*)::int from tools t where t.vote_count <> (select count(*) from votes v where v.tool_id = t.id)) as vote_mismatches,
         -- A booking accepted twice (moved on by a later proposal) belongs to its latest proposer.
         (select count(*)::int from (select distinct on (p.booking_id) p.booking_id, p.proposer_agent_id from proposals p
                                      where p.status = 'accepted' order by p.booking_id, p.decided_at desc) latest
           join bookings b on b.id = latest.booking_id where b.agent_id <> latest.proposer_agent_id) as misplaced_accepts,
         -- The cap applies to POST /api/bookings (seed 000); bookings that came by an accepted proposal are not counted.
         -- Live is read from the slots themselves (a series counts while any slot has not ended), not from live_until.
         (select count(*)::int from (select agent_id from bookings b
                                      where status = 'confirmed' and exists (select 1 from booking_slots s where s.booking_id = b.id and s.ends_at > now())
                                        and not exists (select 1 from proposals p where p.booking_id = b.id and p.status = 'accepted')
                                      group by agent_id having count(*) > $1) over) as over_cap`,
      [BOOKING_CAP],
    );
    const broken = invariants.rows[0]!;
    for (const [name, value] of Object.entries(broken)) if (value !== 0) problems.push(`invariant ${name}: ${value}`);
    if (replica) {
      for (const [i, routes] of replicaReads.entries()) if (!routes.get('replica')) problems.push(`${gateways[i]!.name}: the replica served none of its reads`);
      if (replicaWatch.leftOut.length) problems.push(`the replica was left out: ${replicaWatch.leftOut.join('; ')}`);
    }

    const retried = await db.query<{ deliveries: number; errors: string[] | null; events: string[] | null }>(
      `select count(distinct a.delivery_id)::int as deliveries, array_agg(distinct left(a.error, 120)) filter (where a.error is not null) as errors,
              array_agg(distinct 'evt_' || d.event_id) as events
         from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
        where a.status_code is distinct from 204 or a.attempt > 1`,
    );
    // At least once: a duplicate is fine after a failed or cut-off attempt of that event, and a bug without one.
    const retriedEvents = new Set(retried.rows[0]!.events ?? []);
    const seen = new Set<string>();
    const unexplained = new Set(webhookIds.filter((id) => (seen.has(id) ? !retriedEvents.has(id) : (seen.add(id), false))));
    if (unexplained.size > 0) problems.push(`${unexplained.size} events delivered twice without a failed or repeated attempt`);
    const byStatus = [...statuses].filter(([key]) => !key.startsWith('setup')).sort();
    console.log('\n### Soak: requests by route and status\n');
    console.log('| route | status | count |\n| --- | --- | --- |');
    for (const [key, n] of byStatus) {
      const at = key.lastIndexOf(' ');
      console.log(`| ${key.slice(0, at)} | ${key.slice(at + 1)} | ${n} |`);
    }
    console.log('\n### Soak: outcome\n');
    console.log('| figure | value |\n| --- | --- |');
    console.log(`| operations | ${requests} in ${SECONDS} s |`);
    console.log(`| 5xx or failed requests | ${byStatus.filter(([key]) => /\s(5\d\d|failed)$/.test(key)).reduce((sum, [, n]) => sum + n, 0)} |`);
    console.log(`| booking events | ${events.length} |`);
    console.log(`| subscribers with every event of their agent, once, in order | ${subscribersOk}/${subscribers.length} |`);
    console.log(`| webhook deliveries received / events / duplicates | ${webhookIds.length} / ${events.length} / ${duplicates} |`);
    console.log(`| deliveries with a failed or repeated attempt (errors) | ${retried.rows[0]!.deliveries} (${(retried.rows[0]!.errors ?? []).join('; ') || 'none'}) |`);
    for (const [i, gateway] of gateways.entries()) {
      console.log(`| ${gateway.name} heap after GC: at ${EARLY_HEAP_AT_S} s → end | ${((early?.[i] ?? 0) / 1e6).toFixed(1)} MB → ${(end[i]! / 1e6).toFixed(1)} MB |`);
    }
    console.log(`| invariants (overlaps, vote counts, accepted bookings, cap) | ${Object.values(broken).every((value) => value === 0) ? 'hold' : JSON.stringify(broken)} |`);
    console.log(`| bookings reads after the reader's own write: checked / stale / booking left the calendar meanwhile | ${readsChecked.reads} / ${readsChecked.stale} / ${readsChecked.leftCalendar} |`);
    for (const [i, gateway] of gateways.entries()) {
      const routes = [...replicaReads[i]!].sort(([x], [y]) => x.localeCompare(y)).map(([route, n]) => `${route} ${n}`);
      if (routes.length) console.log(`| ${gateway.name} replica reads by route | ${routes.join(', ')} |`);
    }
    const writes = byStatus.filter(([key]) => /^(POST|PATCH)/.test(key)).reduce((sum, [, n]) => sum + n, 0);
    console.log(`| WAL written during the traffic | ${(walBytes / 1e6).toFixed(1)} MB, ${(walBytes / SECONDS / 1e3).toFixed(0)} kB/s, ${Math.round(walBytes / Math.max(1, writes))} bytes per write request |`);
    console.log(`| PostgreSQL client connections, most seen | ${peakConnections} |`);
    if (replica) {
      const sorted = [...replicaWatch.lags].sort((x, y) => x - y);
      console.log(`| replica lag in ${replicaWatch.samples} status reports: median / 99th percentile / largest | ${sorted[Math.floor(sorted.length / 2)] ?? 0} / ${sorted[Math.floor(sorted.length * 0.99)] ?? 0} / ${replicaWatch.maxLagMs} ms |`);
      console.log(`| replica left out | ${replicaWatch.leftOut.length ? replicaWatch.leftOut.join('; ') : 'never'} |`);
    }
    if (problems.length) {
      console.log('\nProblems:');
      for (const problem of problems) console.log(`  - ${problem}`);
    }
    console.log(`\nsoak took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    watching = false;
    await Promise.all(clients.map((client) => client.dispose()));
    for (const gateway of gateways) {
      const exited = once(gateway.child, 'exit');
      gateway.child.kill('SIGTERM');
      await exited;
      if (gateway.child.exitCode !== 0) problems.push(`${gateway.name} exited with ${gateway.child.exitCode} on SIGTERM`);
    }
    for (const receiver of receivers) receiver.close();
    await db.end();
    await smtp.close();
    await screener.close();
    await replica?.destroy();
    await pooler?.stop();
    await database?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  problems.push(String(error instanceof Error ? (error.stack ?? error.message) : error));
  console.error(error);
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
}
process.exit(problems.length ? 1 : 0);
