/**
 * `npm run bench`: the gateway (`node dist/src/main.js`) measured against the hand-written reference
 * server (bench/reference/server.ts: plain Fastify + pg, same SQL semantics, no events), both as child
 * processes on one throwaway embedded PostgreSQL (or DATABASE_URL), with the same seeded data.
 *
 * Scenarios (each timed run alternates gateway and reference; ratios are gateway / reference):
 *   S1  POST /api/bookings, a fresh 1-minute slot per request, agents round-robin (all 201)
 *   S2  GET /api/bookings over a 3-month window that holds 50+ rows, limit 50, agents round-robin
 *   S3  the same list through GraphQL (gateway only; against the reference's S2 of the same round)
 *   S4  200 simultaneous creates of one slot: exactly one 201, the rest 409 slot_taken, no 5xx
 *   S5  S1 with 10 webhooks per agent and 200 graphql-ws subscribers (gateway only; against its S1)
 *   S6  1,000 subscribers of one agent (in processes of their own, subscribers.ts), 200 creates one after another,
 *       one every BENCH_S6_INTERVAL_MS: commit (PostgreSQL's commit timestamp) → receipt latency, and from the
 *       event's createdAt (the clock read before the write) as earlier reports measured
 *   S7  one-month list latency, sequential: an agent with 1 booking vs one with 100,000 past bookings
 *   S8  GET /api/availability: 10 agents with 500 bookings each in a 30-day window, each asking about the
 *       other nine over that window (30-minute slots on a 15-minute grid, limit 50); the reference runs
 *       the same named statement over node-postgres
 *   S9  S2 served from a streaming replica (a second gateway with DATABASE_REPLICA_URLS, the standby made
 *       from the bench's cluster as durable as it) beside S2 from the primary (the gateway); CPU per request
 *       of each gateway, the primary and the standby. Embedded cluster only
 *
 * Environment: BENCH_ROUNDS (3), BENCH_SECONDS (10 per timed run), BENCH_CONNECTIONS (16),
 * BENCH_SCENARIOS (S1,…,S9: a subset), BENCH_SMOKE=1 (1 round of 2 s, 100 agents, fewer subscribers),
 * BENCH_S6_SOCKETS (100: WebSocket connections the 1,000 S6 subscriptions share; 1000 = one each),
 * BENCH_S6_PROCESSES (2: processes the S6 subscribers run in, apart from the load generator; see subscribers.ts),
 * BENCH_S6_INTERVAL_MS (50: a create starts this long after the previous one started, or when it ends if
 * later; 20 events/s is 20,000 messages/s to the subscribers. 0 = back to back: the machine's two cores are
 * then saturated by gateway, PostgreSQL and subscribers together, and the latency is mostly queueing),
 * DATABASE_URL (an existing database instead of the embedded one; the bench adds its own agents),
 * BENCH_SQL_STATS=1 (embedded database only: pg_stat_statements on; the statements that took the most
 * database time in the first timed round of S1 and of S5 are printed after it),
 * BENCH_GATEWAY_NODE_ARGS (extra node flags for the gateway, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
 * The embedded cluster runs without fsync (both targets alike): the numbers are CPU, not disk.
 * Exits non-zero when a rule is broken (S1 non-201, S4 race outcome, S6 missing deliveries, …).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { cpuMsPerRequest, readCpu } from './cpu.js';
import type { FromSubscribers, StartSubscribers, SubscribersReceipts, SubscribersStatus, ToSubscribers } from './subscribers.js';
import { freePort, startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { startStreamingReplica, type StreamingReplica } from '../factories/streaming-replica.js';
import { createLogger } from '../../src/platform/logger.js';

// ---------------------------------------------------------------------------------------------------
// Settings

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, not ${raw}`);
  return value;
}

const SMOKE = process.env.BENCH_SMOKE === '1';
const SQL_STATS = process.env.BENCH_SQL_STATS === '1';
const ROUNDS = positive('BENCH_ROUNDS', SMOKE ? 1 : 3);
if (ROUNDS > 20) throw new Error('BENCH_ROUNDS must be at most 20 (each round books its own calendar years, all before 2200)');
const SECONDS = positive('BENCH_SECONDS', SMOKE ? 2 : 10);
const CONNECTIONS = positive('BENCH_CONNECTIONS', 16);
const AGENTS = SMOKE ? 100 : 1000;
const BOOKINGS_PER_AGENT = 200;
const RACE_CONTENDERS = 200;
const S5_WEBHOOKS_PER_AGENT = SMOKE ? 2 : 10;
const S5_SUBSCRIBERS = SMOKE ? 20 : 200;
const S6_SUBSCRIBERS = SMOKE ? 100 : 1000;
const S6_SOCKETS = positive('BENCH_S6_SOCKETS', SMOKE ? 10 : 100);
const S6_PROCESSES = positive('BENCH_S6_PROCESSES', 2);
const S6_INTERVAL_MS = Number(process.env.BENCH_S6_INTERVAL_MS ?? 50);
if (!Number.isInteger(S6_INTERVAL_MS) || S6_INTERVAL_MS < 0) throw new Error('BENCH_S6_INTERVAL_MS must be a whole number of milliseconds, 0 or more');
if (S6_SUBSCRIBERS % S6_SOCKETS !== 0) throw new Error(`BENCH_S6_SOCKETS must divide the ${S6_SUBSCRIBERS} S6 subscriptions`);
const S6_CREATES = SMOKE ? 50 : 200;
const S7_HISTORY = SMOKE ? 10_000 : 100_000;
const S7_REQUESTS = SMOKE ? 100 : 500;
/** Each S7 series stops early after this long (the history agent can be slow). */
const S7_MAX_SECONDS = SMOKE ? 3 : 8;

const ALL_SCENARIOS = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7', 'S8', 'S9'] as const;
type ScenarioId = (typeof ALL_SCENARIOS)[number];
const SELECTED = new Set(
  (process.env.BENCH_SCENARIOS || ALL_SCENARIOS.join(','))
    .split(',')
    .map((name) => name.trim().toUpperCase())
    .filter(Boolean),
);
for (const name of SELECTED) {
  if (!(ALL_SCENARIOS as readonly string[]).includes(name)) throw new Error(`BENCH_SCENARIOS: unknown scenario ${name} (use ${ALL_SCENARIOS.join(',')})`);
}
const runs = (scenario: ScenarioId) => SELECTED.has(scenario);

/** Seeded calendars: 200 half-hour bookings per agent, one every 43 hours through 2030. */
const SEED_START = '2030-01-01T00:00:00.000Z';
const SEED_SPACING_HOURS = 43;
/** The S2/S3 window, in the middle of the seeded year: 51 bookings start inside it. */
const LIST_FROM = '2030-04-01T00:00:00.000Z';
const LIST_TO = '2030-07-01T00:00:00.000Z';
/** The S7 window (one month) and the history before it. */
const HISTORY_FROM = '2030-06-01T00:00:00.000Z';
const HISTORY_TO = '2030-07-01T00:00:00.000Z';

/** S8: ten agents, 500 bookings of 15 minutes each inside one 30-day window (one every 86.4 minutes, a few minutes either way). */
const S8_AGENTS = 10;
const S8_BOOKINGS_PER_AGENT = 500;
const S8_FROM = '2160-03-01T00:00:00.000Z';
const S8_TO = '2160-03-31T00:00:00.000Z';

// Years no two timed runs share: the gateway and the reference never book the same calendar minute.
const s1Year = (round: number, target: TargetName) => 2031 + 2 * round + (target === 'gateway' ? 0 : 1);
const s5Year = (round: number) => 2073 + round;
const s4Slot = (round: number, target: TargetName) => Date.UTC(2093, 0, 1 + 2 * round + (target === 'gateway' ? 0 : 1), 10);
const s6Year = (round: number) => 2094 + round;
const warmUpYear = (target: TargetName) => (target === 'gateway' ? 2071 : 2072);
/** Untimed load before the first round of S1, S2 and S3, so no target is measured cold (JIT, pools, plans). */
const WARM_UP_SECONDS = SMOKE ? 1 : 2;

const MINUTE = 60_000;

// ---------------------------------------------------------------------------------------------------
// Types and small helpers

type TargetName = 'gateway' | 'reference' | 'gateway-replica';

interface Target {
  name: TargetName;
  base: string;
  /** Its process, for the CPU a request costs. */
  pid?: number | undefined;
}

interface Agent {
  id: string;
  token: string;
}

/** One timed autocannon run. */
interface LoadRun {
  round: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  /** CPU milliseconds per request of the target's process and of PostgreSQL's (null where unknown). */
  cpuMs: { server: number | null; database: number | null };
}

interface HttpRequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const problems: string[] = [];
const note = (message: string) => console.log(`  · ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

function median(values: number[]): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const round3 = (value: number) => Math.round(value * 1000) / 1000;
const round2 = (value: number) => Math.round(value * 100) / 100;

/** Runs `work` for every target of a round, the order alternating from round to round. */
async function alternate<T>(round: number, targets: Target[], work: (target: Target) => Promise<T>): Promise<Map<TargetName, T>> {
  const ordered = round % 2 === 0 ? targets : [...targets].reverse();
  const results = new Map<TargetName, T>();
  for (const target of ordered) results.set(target.name, await work(target));
  return results;
}

const bearer = (agent: Agent) => ({ authorization: `Bearer ${agent.token}` });

async function postJson(base: string, path: string, body: unknown, agent: Agent): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(agent) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const bookingBody = (agent: Agent, startsAt: number, minutes: number) =>
  JSON.stringify({ agentId: agent.id, startsAt: new Date(startsAt).toISOString(), endsAt: new Date(startsAt + minutes * MINUTE).toISOString() });

/** A timed autocannon run; `request(n)` builds the n-th request. */
async function load(target: Target, round: number, request: (n: number) => HttpRequestSpec, seconds = SECONDS): Promise<LoadRun> {
  let counter = 0;
  const cpuBefore = await readCpu(target.pid, clusterDir);
  const result = await autocannon({
    url: target.base,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ setupRequest: (base) => ({ ...base, ...request(counter++) }) }],
  });
  const cpu = cpuMsPerRequest(cpuBefore, await readCpu(target.pid, clusterDir), result.requests.total);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]));
  return {
    round,
    rps: Math.round(result.requests.total / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses,
    cpuMs: cpu,
  };
}

// ---------------------------------------------------------------------------------------------------
// Processes: database, gateway, reference

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const children: { name: string; child: ChildProcess }[] = [];
let stopping = false;

async function startChild(name: string, args: string[], env: Record<string, string>): Promise<Target & { child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push({ name, child });
  child.once('exit', (code, signal) => {
    if (!stopping) problems.push(`${name} exited during the bench (${code ?? signal})`);
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited during start-up (${child.exitCode ?? child.signalCode})`);
    if (await fetch(`${base}/readyz`).then((response) => response.ok, () => false)) break;
    if (Date.now() > deadline) throw new Error(`${name} did not become ready within 120 s`);
    await sleep(100);
  }
  return { name: name as TargetName, base, child, pid: child.pid };
}

async function stopChild(name: string, child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    console.error(`${name} did not stop within 20 s; killing it`);
    child.kill('SIGKILL');
  }, 20_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------------
// Seeding (SQL, not HTTP)

interface Seeded {
  agents: Agent[];
  /** S7: one booking, in the window. */
  flat: Agent;
  /** S7: S7_HISTORY past bookings, plus three in the window. */
  history: Agent;
  /** S8: agents whose free/busy anyone may ask for, with S8_BOOKINGS_PER_AGENT bookings in the S8 window. */
  availability: Agent[];
}

const newToken = () => `agt_${randomBytes(32).toString('base64url')}`;

async function insertAgents(db: pg.Pool, count: number, parentId: string, prefix: string): Promise<Agent[]> {
  const agents = Array.from({ length: count }, () => ({ id: randomUUID(), token: newToken() }));
  await db.query(
    `insert into agents (id, name, metadata, config, token_hash, parent_id, created_at)
     select id, $3 || ord, '{}', '{}', hash, $4, now() from unnest($1::uuid[], $2::text[]) with ordinality as t(id, hash, ord)`,
    [agents.map((agent) => agent.id), agents.map((agent) => sha256Hex(agent.token)), prefix, parentId],
  );
  return agents;
}

async function seed(db: pg.Pool): Promise<Seeded> {
  const started = performance.now();
  // The bootstrap root: ours on a fresh database; on a shared one, the bench's agents hang under the existing root.
  const existing = await db.query<{ id: string }>('select id from agents where parent_id is null');
  let root: Agent | undefined;
  let rootId = existing.rows[0]?.id;
  if (!rootId) {
    root = { id: randomUUID(), token: newToken() };
    rootId = root.id;
    await db.query(
      `insert into agents (id, name, metadata, config, token_hash, parent_id, created_at) values ($1, 'bench-root', '{}', '{}', $2, null, now())`,
      [root.id, sha256Hex(root.token)],
    );
  }
  const others = await insertAgents(db, root ? AGENTS - 1 : AGENTS, rootId, 'bench-');
  const agents = root ? [root, ...others] : others;
  const [flat, history] = (await insertAgents(db, 2, rootId, 'bench-s7-')) as [Agent, Agent];

  // Each statement writes bookings and their slots together; two halves of the calendars and the
  // history go in parallel (the exclusion constraint's GiST index makes the slots the slow part).
  const withSlots = (bookingsSql: string) =>
    `with b as (${bookingsSql} returning id, agent_id, starts_at, ends_at)
     insert into booking_slots (booking_id, agent_id, starts_at, ends_at) select id, agent_id, starts_at, ends_at from b`;
  const half = Math.ceil(agents.length / 2);
  const work = [agents.slice(0, half), agents.slice(half)].map((chunk) =>
    db.query(
      withSlots(`insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
       select gen_random_uuid(), a.id, s.at, s.at + interval '30 minutes', 'confirmed', null, '[]', now(), s.at + interval '30 minutes'
         from unnest($1::uuid[]) as a(id)
        cross join (select $2::timestamptz + i * ($3 * interval '1 hour') as at from generate_series(0, $4 - 1) i) s`),
      [chunk.map((agent) => agent.id), SEED_START, SEED_SPACING_HOURS, BOOKINGS_PER_AGENT],
    ),
  );
  if (runs('S7')) {
    // 30-minute bookings every 105 minutes from 2010 (100,000 of them end in 2029), created when they started;
    // then one booking for the flat agent and three for the history agent inside the S7 window.
    work.push(
      db.query(
        withSlots(`insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
         select gen_random_uuid(), $1, at, at + interval '30 minutes', 'confirmed', null, '[]', least(at, now()), at + interval '30 minutes'
           from (select timestamptz '2010-01-01T00:00:00Z' + i * interval '105 minutes' as at from generate_series(0, $2 - 1) i
                 union all values (timestamptz '2030-06-05T10:00:00Z'), ('2030-06-15T10:00:00Z'), ('2030-06-25T10:00:00Z')) s(at)`),
        [history.id, S7_HISTORY],
      ),
      db.query(
        withSlots(`insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
         values (gen_random_uuid(), $1, '2030-06-10T10:00:00Z', '2030-06-10T10:30:00Z', 'confirmed', null, '[]', now(), '2030-06-10T10:30:00Z')`),
        [flat.id],
      ),
    );
  }
  let availability: Agent[] = [];
  if (runs('S8')) {
    availability = await insertAgents(db, S8_AGENTS, rootId, 'bench-s8-');
    await db.query(`update agents set free_busy_visibility = 'anyone' where id = any($1::uuid[])`, [availability.map((agent) => agent.id)]);
    // Spread evenly, each start moved by 0 to 65 minutes (a hash of agent and index, so every run seeds the same calendars).
    work.push(
      db.query(
        withSlots(`insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
         select gen_random_uuid(), a.id, s.at, s.at + interval '15 minutes', 'confirmed', null, '[]', now(), s.at + interval '15 minutes'
           from unnest($1::uuid[]) with ordinality as a(id, n)
          cross join lateral (
            select date_bin('5 minutes', $2::timestamptz + i * ($3::timestamptz - $2::timestamptz) / $4
                                         + (abs(hashtext(a.n || ':' || i)) % 14) * interval '5 minutes', timestamptz '2000-01-01') as at
              from generate_series(0, $4 - 1) i
          ) s`),
        [availability.map((agent) => agent.id), S8_FROM, S8_TO, S8_BOOKINGS_PER_AGENT],
      ),
    );
  }
  await Promise.all(work);
  await db.query('analyze agents, bookings, booking_slots');
  // Availability reads slots index-only; autovacuum would mark the freshly written pages all-visible within a minute.
  if (runs('S8')) await db.query('vacuum booking_slots');
  const count = await db.query<{ n: string }>('select count(*) as n from bookings where agent_id = any($1::uuid[])', [[...agents, flat, history].map((agent) => agent.id)]);
  note(`seeded ${agents.length + 2} agents and ${count.rows[0]!.n} bookings (+ slots) with SQL in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { agents, flat, history, availability };
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

/** S1 (and S5): every request books a fresh minute in `year` for the next agent, round-robin. */
function createRequests(agents: Agent[], year: number) {
  const start = Date.UTC(year, 0, 1);
  return (n: number): HttpRequestSpec => {
    const agent = agents[n % agents.length]!;
    return {
      method: 'POST',
      path: '/api/bookings',
      headers: { 'content-type': 'application/json', ...bearer(agent) },
      body: bookingBody(agent, start + Math.floor(n / agents.length) * MINUTE, 1),
    };
  };
}

function checkAllCreated(scenario: string, target: TargetName, run: LoadRun): void {
  const created = run.statuses['201'] ?? 0;
  if (created !== run.requests || run.errors) {
    problems.push(`${scenario} ${target} round ${run.round + 1}: ${created} of ${run.requests} answered 201 (statuses ${JSON.stringify(run.statuses)}, ${run.errors} errors)`);
  }
}

/** S8: the n-th request asks as the next agent, about the other nine. */
function availabilityPath(agents: Agent[], n: number): { caller: Agent; path: string } {
  const caller = agents[n % agents.length]!;
  const others = agents.filter((agent) => agent !== caller).map((agent) => agent.id);
  const query = new URLSearchParams({ agents: others.join(','), duration: '30', from: S8_FROM, to: S8_TO, granularity: '15', limit: '50' });
  return { caller, path: `/api/availability?${query.toString()}` };
}

function availabilityRequests(agents: Agent[]) {
  return (n: number): HttpRequestSpec => {
    const { caller, path } = availabilityPath(agents, n);
    return { method: 'GET', path, headers: bearer(caller) };
  };
}

/** Both targets answer S8 with 200 and the same JSON, for every caller. */
async function assertSameAvailability(targets: Target[], agents: Agent[]): Promise<number> {
  let slots = 0;
  for (let n = 0; n < agents.length; n++) {
    const { caller, path } = availabilityPath(agents, n);
    const bodies: unknown[] = [];
    for (const target of targets) {
      const response = await fetch(`${target.base}${path}`, { headers: bearer(caller) });
      const body = (await response.json()) as { items?: unknown[] };
      if (response.status !== 200 || !Array.isArray(body.items)) throw new Error(`S8 ${target.name}: expected 200 with items, got ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
      bodies.push(body);
      slots = body.items.length;
    }
    if (bodies.length === 2 && !isDeepStrictEqual(bodies[0], bodies[1])) problems.push(`S8: the gateway and the reference answer different JSON for caller ${n}`);
  }
  return slots;
}

/** S8 unloaded: sequential requests on one connection, callers in turn; latency per request in ms. */
async function sequentialAvailability(target: Target, agents: Agent[]): Promise<{ p50: number; p99: number; requests: number }> {
  const latencies: number[] = [];
  const deadline = performance.now() + S7_MAX_SECONDS * 1000;
  for (let i = 0; i < S7_REQUESTS + 10 && performance.now() < deadline; i++) {
    const { caller, path } = availabilityPath(agents, i);
    const started = performance.now();
    const response = await fetch(`${target.base}${path}`, { headers: bearer(caller) });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`S8 sequential ${target.name}: ${response.status}`);
    if (i >= 10) latencies.push(performance.now() - started); // ten warm-up requests
  }
  return { p50: round2(percentile(latencies, 50)), p99: round2(percentile(latencies, 99)), requests: latencies.length };
}

const LIST_PATH = `/api/bookings?from=${encodeURIComponent(LIST_FROM)}&to=${encodeURIComponent(LIST_TO)}&limit=50`;

function listRequests(agents: Agent[]) {
  return (n: number): HttpRequestSpec => ({ method: 'GET', path: LIST_PATH, headers: bearer(agents[n % agents.length]!) });
}

const GRAPHQL_LIST = JSON.stringify({
  query: `{ bookings(from: "${LIST_FROM}", to: "${LIST_TO}", first: 50) { edges { node { id startsAt endsAt status agent { id name } } } } }`,
});

function graphqlRequests(agents: Agent[]) {
  return (n: number): HttpRequestSpec => ({
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', ...bearer(agents[n % agents.length]!) },
    body: GRAPHQL_LIST,
  });
}

/** Both targets answer the S2 request with 50 items, and with the same JSON. */
async function assertListOf50(targets: Target[], agent: Agent): Promise<void> {
  const bodies: unknown[] = [];
  for (const target of targets) {
    const response = await fetch(`${target.base}${LIST_PATH}`, { headers: bearer(agent) });
    const body = (await response.json()) as { items?: unknown[] };
    if (response.status !== 200 || body.items?.length !== 50) {
      throw new Error(`S2 ${target.name}: expected 200 with 50 items, got ${response.status} with ${body.items?.length} items`);
    }
    bodies.push(body);
  }
  if (bodies.length === 2 && !isDeepStrictEqual(bodies[0], bodies[1])) problems.push('S2: the gateway and the reference list different JSON for the same window');
}

/**
 * The reference must answer like the gateway: the same status and error code for a few requests
 * beside the happy path. A difference is reported as a broken rule (the ratios would compare apples
 * with pears).
 */
async function checkSameSemantics(targets: Target[], agents: Agent[]): Promise<void> {
  const [a, b] = [agents[0]!, agents[1]!];
  const at = (target: Target) => Date.UTC(2140, 0, target.name === 'gateway' ? 1 : 2, 10);
  const cases: { name: string; send: (target: Target) => Promise<Response> }[] = [
    { name: 'no credential', send: (t) => fetch(`${t.base}${LIST_PATH}`) },
    { name: 'unknown token', send: (t) => fetch(`${t.base}${LIST_PATH}`, { headers: { authorization: 'Bearer agt_unknown' } }) },
    { name: 'X-API-Key', send: (t) => fetch(`${t.base}${LIST_PATH}`, { headers: { 'x-api-key': a.token } }) },
    { name: 'both headers', send: (t) => fetch(`${t.base}${LIST_PATH}`, { headers: { 'x-api-key': a.token, ...bearer(a) } }) },
    { name: 'limit 201', send: (t) => fetch(`${t.base}/api/bookings?limit=201`, { headers: bearer(a) }) },
    { name: 'to before from', send: (t) => fetch(`${t.base}/api/bookings?from=${LIST_TO}&to=${LIST_FROM}`, { headers: bearer(a) }) },
    { name: 'another agentId', send: (t) => fetch(`${t.base}/api/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(a) }, body: bookingBody(b, at(t), 30) }) },
    { name: 'empty range', send: (t) => fetch(`${t.base}/api/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(a) }, body: bookingBody(a, at(t), 0) }) },
    { name: 'extra property', send: (t) => fetch(`${t.base}/api/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(a) }, body: JSON.stringify({ ...(JSON.parse(bookingBody(a, at(t), 30)) as object), rrule: 'FREQ=DAILY' }) }) },
    { name: 'create', send: (t) => fetch(`${t.base}/api/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(a) }, body: bookingBody(a, at(t), 30) }) },
    { name: 'overlap', send: (t) => fetch(`${t.base}/api/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(a) }, body: bookingBody(a, at(t) + 10 * MINUTE, 30) }) },
  ];
  const shape = async (response: Response) => {
    const body = (await response.json()) as Record<string, unknown>;
    const detail = response.status === 400 ? Object.keys((body.errors as object | undefined) ?? {}).join(',') || String(body.error) : String(body.error ?? Object.keys(body).sort().join(','));
    return `${response.status} ${detail}`;
  };
  for (const check of cases) {
    const [gateway, reference] = [await shape(await check.send(targets[0]!)), await shape(await check.send(targets[1]!))];
    if (gateway !== reference) problems.push(`semantics, ${check.name}: gateway answers ${gateway}, reference ${reference}`);
  }
}

async function assertGraphqlOf50(gateway: Target, agent: Agent): Promise<void> {
  const response = await fetch(`${gateway.base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(agent) }, body: GRAPHQL_LIST });
  const body = (await response.json()) as { data?: { bookings: { edges: unknown[] } }; errors?: unknown[] };
  if (response.status !== 200 || body.errors || body.data?.bookings.edges.length !== 50) {
    throw new Error(`S3: expected 50 edges, got ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
  }
}

interface RaceOutcome {
  round: number;
  created: number;
  slotTaken: number;
  serverErrors: number;
  other: number;
  wallMs: number;
}

/** S4: RACE_CONTENDERS simultaneous creates of one slot for one agent. */
async function race(target: Target, agent: Agent, round: number): Promise<RaceOutcome> {
  const startsAt = s4Slot(round, target.name);
  const body = JSON.parse(bookingBody(agent, startsAt, 60)) as unknown;
  const started = performance.now();
  const responses = await Promise.all(
    Array.from({ length: RACE_CONTENDERS }, () =>
      postJson(target.base, '/api/bookings', body, agent).catch((error: unknown) => ({ status: 0, body: { error: String(error) } as Record<string, unknown> })),
    ),
  );
  const wallMs = Math.round(performance.now() - started);
  const created = responses.filter((response) => response.status === 201).length;
  const slotTaken = responses.filter((response) => response.status === 409 && response.body.error === 'slot_taken').length;
  const serverErrors = responses.filter((response) => response.status >= 500).length;
  const outcome = { round, created, slotTaken, serverErrors, other: RACE_CONTENDERS - created - slotTaken - serverErrors, wallMs };
  if (created !== 1 || slotTaken !== RACE_CONTENDERS - 1 || serverErrors) {
    const statuses: Record<string, number> = {};
    for (const { status, body: answer } of responses) {
      const key = `${status} ${typeof answer.error === 'string' ? answer.error : ''}`.trim();
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    problems.push(`S4 ${target.name} round ${round + 1}: ${created} created, ${slotTaken} slot_taken, ${serverErrors} 5xx (${JSON.stringify(statuses)})`);
  }
  return outcome;
}

/** S7: sequential requests on one connection; latency per request in ms. */
async function sequentialList(target: Target, agent: Agent, expectedItems: number): Promise<{ p50: number; p99: number; requests: number; items: number }> {
  const url = `${target.base}/api/bookings?from=${encodeURIComponent(HISTORY_FROM)}&to=${encodeURIComponent(HISTORY_TO)}&limit=50`;
  const headers = bearer(agent);
  const latencies: number[] = [];
  let items = 0;
  const deadline = performance.now() + S7_MAX_SECONDS * 1000;
  for (let i = 0; i < S7_REQUESTS + 10 && performance.now() < deadline; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers });
    const body = (await response.json()) as { items?: unknown[] };
    if (i >= 10) latencies.push(performance.now() - started); // ten warm-up requests
    items = body.items?.length ?? -1;
    if (response.status !== 200 || items !== expectedItems) {
      throw new Error(`S7 ${target.name}: expected 200 with ${expectedItems} items, got ${response.status} with ${items}`);
    }
  }
  return { p50: round2(percentile(latencies, 50)), p99: round2(percentile(latencies, 99)), requests: latencies.length, items };
}

interface Subscriber {
  received: number;
}

const BOOKING_EVENTS = 'subscription { bookingEvents { cursor type createdAt booking { id } } }';

/** Opens `sockets` graphql-ws connections in this process and spreads `agents.length` subscriptions over them (S5). */
async function subscribe(gateway: Target, agents: Agent[], sockets: number): Promise<{ clients: Client[]; subscribers: Subscriber[]; errors: string[] }> {
  const url = `${gateway.base.replace('http', 'ws')}/graphql`;
  const errors: string[] = [];
  const clients: Client[] = [];
  const subscribers: Subscriber[] = [];
  const connected: Promise<unknown>[] = [];
  for (let socket = 0; socket < sockets; socket++) {
    const mine = agents.filter((_, index) => index % sockets === socket);
    if (!mine.length) continue;
    // One credential per connection: the agents on a socket are the same agent, or one agent each.
    const client = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: bearer(mine[0]!),
      lazy: false,
      retryAttempts: 0,
      on: { error: (error) => void errors.push(String(error)) },
    });
    connected.push(new Promise((resolve) => client.on('connected', resolve)));
    clients.push(client);
    for (const _agent of mine) {
      const subscriber: Subscriber = { received: 0 };
      subscribers.push(subscriber);
      client.subscribe<{ bookingEvents: { createdAt: string; booking: { id: string } } }>(
        { query: BOOKING_EVENTS },
        {
          next: (value) => {
            const event = value.data?.bookingEvents;
            if (!event) return void errors.push(JSON.stringify(value.errors ?? value).slice(0, 300));
            subscriber.received++;
          },
          error: (error) => void errors.push(error instanceof Error ? error.message : JSON.stringify(error).slice(0, 300)),
          complete: () => undefined,
        },
      );
    }
  }
  await Promise.race([Promise.all(connected), sleep(60_000)]);
  return { clients, subscribers, errors };
}

/** S6's subscribers, in processes of their own (subscribers.ts); requests are answered in order. */
class SubscriberProcesses {
  private constructor(private readonly children: { child: ChildProcess; answers: { resolve: (message: FromSubscribers) => void; reject: (error: Error) => void }[] }[]) {}

  static async start(gateway: Target, agent: Agent, processes: number, sockets: number, subscriptions: number): Promise<SubscriberProcesses> {
    const children = Array.from({ length: Math.min(processes, sockets) }, () => {
      const child = fork(fileURLToPath(new URL('./subscribers.ts', import.meta.url)), { execArgv: process.execArgv, stdio: 'inherit' });
      const entry = { child, answers: [] as { resolve: (message: FromSubscribers) => void; reject: (error: Error) => void }[] };
      child.on('message', (message: FromSubscribers) => entry.answers.shift()?.resolve(message));
      child.on('exit', (code) => entry.answers.splice(0).forEach(({ reject }) => reject(new Error(`S6 subscriber process exited (${code})`))));
      return entry;
    });
    const group = new SubscriberProcesses(children);
    await Promise.all(
      children.map((_, index) => {
        const mySockets = Math.floor(sockets / children.length) + (index < sockets % children.length ? 1 : 0);
        const start: StartSubscribers = {
          type: 'start',
          url: `${gateway.base.replace('http', 'ws')}/graphql`,
          connectionParams: bearer(agent),
          sockets: mySockets,
          subscriptionsPerSocket: subscriptions / sockets,
          query: BOOKING_EVENTS,
        };
        return group.ask(index, start);
      }),
    );
    return group;
  }

  async status(): Promise<{ subscriptions: number; live: number; fewest: number; errors: string[] }> {
    const answers = (await Promise.all(this.children.map((_, index) => this.ask(index, { type: 'status' })))) as SubscribersStatus[];
    return {
      subscriptions: answers.reduce((sum, answer) => sum + answer.subscriptions, 0),
      live: answers.reduce((sum, answer) => sum + answer.live, 0),
      fewest: Math.min(...answers.map((answer) => answer.fewest)),
      errors: answers.flatMap((answer) => answer.errors),
    };
  }

  /** Every subscription's receipts since the last call (booking id → epoch ms), and each event's createdAt. */
  async collect(): Promise<{ receipts: Map<string, number>[]; createdAt: Map<string, number> }> {
    const answers = (await Promise.all(this.children.map((_, index) => this.ask(index, { type: 'collect' })))) as SubscribersReceipts[];
    return {
      receipts: answers.flatMap((answer) => answer.receipts.map((received) => new Map(Object.entries(received)))),
      createdAt: new Map(answers.flatMap((answer) => Object.entries(answer.createdAt))),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.children.map((_, index) => this.ask(index, { type: 'stop' }).catch(() => undefined)));
  }

  private ask(index: number, message: ToSubscribers): Promise<FromSubscribers> {
    const { child, answers } = this.children[index]!;
    return new Promise((resolve, reject) => {
      answers.push({ resolve, reject });
      child.send(message, (error) => error && reject(error));
    });
  }
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Reporting

interface Summary {
  median: number;
  min: number;
  max: number;
}

const summary = (values: number[]): Summary => ({ median: round2(median(values)), min: round2(Math.min(...values)), max: round2(Math.max(...values)) });
const range = (s: Summary, digits = 0) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

interface LoadSummary {
  rps: Summary;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  rounds: number;
  /** Medians of the per-round CPU milliseconds per request. */
  cpuMs: { server: number | null; database: number | null };
}

const medianOrNull = (values: (number | null)[]) => (values.every((value) => value !== null) && values.length ? round3(median(values as number[])) : null);

function summariseRuns(loadRuns: LoadRun[]): LoadSummary {
  return {
    rps: summary(loadRuns.map((run) => run.rps)),
    p50: round1(median(loadRuns.map((run) => run.p50))),
    p99: round1(median(loadRuns.map((run) => run.p99))),
    non2xx: loadRuns.reduce((sum, run) => sum + run.non2xx, 0),
    errors: loadRuns.reduce((sum, run) => sum + run.errors, 0),
    rounds: loadRuns.length,
    cpuMs: { server: medianOrNull(loadRuns.map((run) => run.cpuMs.server)), database: medianOrNull(loadRuns.map((run) => run.cpuMs.database)) },
  };
}

/** Median (min–max) of per-round ratios a[i] / b[i]. */
function ratios(a: number[], b: number[]): Summary {
  return summary(a.map((value, index) => value / b[index]!));
}

function markdownTable(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function loadRow(label: string, s: LoadSummary): (string | number)[] {
  return [label, range(s.rps), s.p50, s.p99, s.non2xx, s.errors, s.cpuMs.server ?? 'n/a', s.cpuMs.database ?? 'n/a'];
}

const cpuText = (run: LoadRun) => `CPU per request: server ${run.cpuMs.server ?? '?'} ms, PostgreSQL ${run.cpuMs.database ?? '?'} ms`;

/**
 * Median (min–max) of the per-round ratios of server CPU per request, gateway / reference: steadier than req/s
 * on a shared machine (a busy neighbour slows both targets' clocks, not the work a request takes).
 */
function cpuRatioText(gateway: LoadRun[], reference: LoadRun[]): string {
  const pairs = gateway.map((run, index) => [run.cpuMs.server, reference[index]?.cpuMs.server] as const);
  if (!pairs.length || pairs.some(([ours, theirs]) => !ours || !theirs)) return '';
  return `; server CPU per request ${range(ratios(pairs.map(([ours]) => ours!), pairs.map(([, theirs]) => theirs!)), 2)}`;
}

const LOAD_HEADER = ['target', 'req/s median (min–max)', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'server CPU ms/req', 'PostgreSQL CPU ms/req'];

// ---------------------------------------------------------------------------------------------------
// Main

const report: Record<string, unknown> = {};
const compact: (string | number)[][] = [];
let dataDir: string | undefined;
/** The embedded cluster's directory (for PostgreSQL's CPU per request); undefined with DATABASE_URL. */
let clusterDir: string | undefined;
let database: { url: string; stop(): Promise<void> } | undefined;
let db: pg.Pool | undefined;
let receiver: ReturnType<typeof createServer> | undefined;
const wsClients: Client[] = [];
let subscriberProcesses: SubscriberProcesses | undefined;

async function cleanup(): Promise<void> {
  stopping = true;
  await Promise.all(wsClients.map((client) => Promise.resolve(client.dispose()).catch(() => undefined)));
  wsClients.length = 0;
  await subscriberProcesses?.stop();
  receiver?.closeAllConnections();
  receiver?.close();
  await db?.end().catch(() => undefined);
  db = undefined;
  for (const { name, child } of children.splice(0).reverse()) await stopChild(name, child).catch((error: unknown) => console.error(error));
  await replica?.destroy().catch((error: unknown) => console.error('removing the S9 replica failed', error));
  replica = undefined;
  await database?.stop().catch((error: unknown) => console.error('stopping PostgreSQL failed', error));
  database = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
}

let interrupted = false;
/**
 * Ctrl-C stops the children, then the database. embedded-postgres (through async-exit-hook) installs
 * its own handlers that stop the cluster and exit at once, orphaning the servers: they are replaced.
 */
function handleSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.once(signal, () => {
      interrupted = true;
      console.error(`\n${signal}: stopping the servers and the database`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}
handleSignals();

async function main(): Promise<void> {
  const benchStarted = performance.now();
  console.log(`bench: ${[...SELECTED].join(',')}; ${ROUNDS} round(s), ${SECONDS} s per run, ${CONNECTIONS} connections${SMOKE ? ' (smoke)' : ''}`);

  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
    database = await startEmbeddedPostgres({ dataDir, logger: createLogger('warn'), ephemeral: true, statementStats: SQL_STATS, commitTimestamps: true });
    clusterDir = join(dataDir, 'pg');
    handleSignals();
    databaseUrl = database.url;
  }
  const common = { DATABASE_URL: databaseUrl, BOOKING_CAP: '100000000', LOG_LEVEL: 'warn' };
  // The gateway runs the migrations before it listens; the reference starts after, on the same tables.
  // BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/profiles" profiles the gateway (written when it stops).
  const gatewayNodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const gateway = await startChild('gateway', [...gatewayNodeArgs, 'dist/src/main.js'], {
    ...common,
    NODE_ENV: 'production', // as `npm start` runs it
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_ANON_PER_MIN: '1000000000',
    RATE_LIMIT_AUTH_PER_MIN: '1000000000',
    PRICE_PROVIDERS: '', // no price polling: all traffic stays on 127.0.0.1
    GRAPHQL_EXPLORER: 'false',
  });
  const reference = await startChild('reference', ['--import', '@swc-node/register/esm-register', 'bench/reference/server.ts'], common);
  const targets: Target[] = [
    { name: 'gateway', base: gateway.base, pid: gateway.pid },
    { name: 'reference', base: reference.base, pid: reference.pid },
  ];
  note(`gateway ${gateway.base}, reference ${reference.base}, PostgreSQL ${database ? 'embedded (fsync off)' : 'from DATABASE_URL'}`);

  db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const { agents, flat, history, availability } = await seed(db);
  await checkSameSemantics(targets, agents);
  if (SQL_STATS) await db.query('create extension if not exists pg_stat_statements');

  // ---- S1
  const s1 = new Map<TargetName, LoadRun[]>([['gateway', []], ['reference', []]]);
  if (runs('S1') || runs('S5')) {
    const s1Targets = runs('S1') ? targets : [targets[0]!]; // S5 alone still needs the gateway's S1
    for (const target of s1Targets) await load(target, -1, createRequests(agents, warmUpYear(target.name)), WARM_UP_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await sqlStatsOf(round === 0 ? 'S1 round 1' : undefined, () =>
        alternate(round, s1Targets, (target) => load(target, round, createRequests(agents, s1Year(round, target.name)))),
      );
      for (const [name, run] of results) {
        s1.get(name)!.push(run);
        checkAllCreated('S1', name, run);
        note(`S1 round ${round + 1} ${name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}, statuses ${JSON.stringify(run.statuses)}`);
      }
    }
  }
  if (runs('S1')) {
    const gw = summariseRuns(s1.get('gateway')!);
    const ref = summariseRuns(s1.get('reference')!);
    const ratio = ratios(s1.get('gateway')!.map((run) => run.rps), s1.get('reference')!.map((run) => run.rps));
    report.S1 = { gateway: gw, reference: ref, ratio, runs: Object.fromEntries(s1) };
    console.log(`\n### S1 POST /api/bookings (fresh 1-minute slot per request, ${agents.length} agents round-robin)\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway', gw), loadRow('reference', ref)]));
    console.log(`\ngateway/reference req/s: ${range(ratio, 2)}`);
    compact.push(['S1 create booking', `${range(gw.rps)} req/s, p99 ${gw.p99} ms`, `${range(ref.rps)} req/s, p99 ${ref.p99} ms`, range(ratio, 2) + cpuRatioText(s1.get('gateway')!, s1.get('reference')!)]);
  }

  // ---- S2 and S3
  const s2 = new Map<TargetName, LoadRun[]>([['gateway', []], ['reference', []]]);
  if (runs('S2') || runs('S3')) {
    await assertListOf50(runs('S2') ? targets : [targets[1]!], agents[0]!);
    const s2Targets = runs('S2') ? targets : [targets[1]!]; // S3 alone still needs the reference's S2
    for (const target of s2Targets) await load(target, -1, listRequests(agents), WARM_UP_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await alternate(round, s2Targets, (target) => load(target, round, listRequests(agents)));
      for (const [name, run] of results) {
        s2.get(name)!.push(run);
        if (run.non2xx || run.errors) problems.push(`S2 ${name} round ${round + 1}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        note(`S2 round ${round + 1} ${name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
      }
    }
  }
  if (runs('S2')) {
    const gw = summariseRuns(s2.get('gateway')!);
    const ref = summariseRuns(s2.get('reference')!);
    const ratio = ratios(s2.get('gateway')!.map((run) => run.rps), s2.get('reference')!.map((run) => run.rps));
    report.S2 = { gateway: gw, reference: ref, ratio, runs: Object.fromEntries(s2) };
    console.log(`\n### S2 GET /api/bookings (3-month window, 50 rows, agents round-robin)\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway', gw), loadRow('reference', ref)]));
    console.log(`\ngateway/reference req/s: ${range(ratio, 2)}`);
    compact.push(['S2 list bookings (50 rows)', `${range(gw.rps)} req/s, p99 ${gw.p99} ms`, `${range(ref.rps)} req/s, p99 ${ref.p99} ms`, range(ratio, 2) + cpuRatioText(s2.get('gateway')!, s2.get('reference')!)]);
  }
  if (runs('S3')) {
    await assertGraphqlOf50(gateway, agents[0]!);
    await load(gateway, -1, graphqlRequests(agents), WARM_UP_SECONDS);
    const s3: LoadRun[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const run = await load(gateway, round, graphqlRequests(agents));
      s3.push(run);
      if (run.non2xx || run.errors) problems.push(`S3 round ${round + 1}: ${run.non2xx} non-2xx, ${run.errors} errors`);
      note(`S3 round ${round + 1} gateway GraphQL: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
    }
    const gw = summariseRuns(s3);
    const ref = summariseRuns(s2.get('reference')!);
    const ratio = ratios(s3.map((run) => run.rps), s2.get('reference')!.map((run) => run.rps));
    report.S3 = { gateway: gw, referenceS2: ref, ratio, runs: s3 };
    console.log(`\n### S3 GraphQL bookings(first: 50) with agent { id name } (gateway) vs the reference's S2\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway (GraphQL)', gw), loadRow('reference (REST, S2)', ref)]));
    console.log(`\ngateway/reference req/s: ${range(ratio, 2)}`);
    compact.push(['S3 GraphQL list (50 rows + agent)', `${range(gw.rps)} req/s, p99 ${gw.p99} ms`, `(S2) ${range(ref.rps)} req/s`, range(ratio, 2) + cpuRatioText(s3, s2.get('reference')!)]);
  }

  // ---- S4
  if (runs('S4')) {
    const s4 = new Map<TargetName, RaceOutcome[]>([['gateway', []], ['reference', []]]);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await alternate(round, targets, (target) => race(target, agents[(2 * round + (target.name === 'gateway' ? 0 : 1)) % agents.length]!, round));
      for (const [name, outcome] of results) s4.get(name)!.push(outcome);
    }
    report.S4 = Object.fromEntries(s4);
    console.log(`\n### S4 ${RACE_CONTENDERS} simultaneous creates of one slot (rule: one 201, the rest 409 slot_taken, no 5xx)\n`);
    const rows = [...s4].flatMap(([name, outcomes]) =>
      outcomes.map((o) => [name, o.round + 1, o.created, o.slotTaken, o.serverErrors, o.other, o.wallMs, o.created === 1 && o.slotTaken === RACE_CONTENDERS - 1 && !o.serverErrors ? 'ok' : 'BROKEN']),
    );
    console.log(markdownTable(['target', 'round', '201', '409 slot_taken', '5xx', 'other', 'wall ms', 'rule'], rows));
    const wall = (name: TargetName) => summary(s4.get(name)!.map((o) => o.wallMs));
    const ok = (name: TargetName) => (s4.get(name)!.every((o) => o.created === 1 && o.slotTaken === RACE_CONTENDERS - 1 && !o.serverErrors) ? 'rule holds' : 'RULE BROKEN');
    compact.push([`S4 ${RACE_CONTENDERS}-way race on one slot`, `${ok('gateway')}, ${range(wall('gateway'))} ms`, `${ok('reference')}, ${range(wall('reference'))} ms`, range(ratios(s4.get('gateway')!.map((o) => o.wallMs), s4.get('reference')!.map((o) => o.wallMs)), 2) + ' (wall time)']);
  }

  // ---- S7 (before S6/S5: no subscribers, no webhook backlog yet)
  if (runs('S7')) {
    const s7 = new Map<TargetName, { round: number; flat: Awaited<ReturnType<typeof sequentialList>>; history: Awaited<ReturnType<typeof sequentialList>> }[]>([['gateway', []], ['reference', []]]);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await alternate(round, targets, async (target) => ({ round, flat: await sequentialList(target, flat, 1), history: await sequentialList(target, history, 3) }));
      for (const [name, result] of results) {
        s7.get(name)!.push(result);
        note(`S7 round ${round + 1} ${name}: 1 booking p50 ${result.flat.p50} ms, ${S7_HISTORY} past bookings p50 ${result.history.p50} ms`);
      }
    }
    const row = (name: TargetName) => {
      const results = s7.get(name)!;
      const flatP50 = round2(median(results.map((r) => r.flat.p50)));
      const historyP50 = round2(median(results.map((r) => r.history.p50)));
      return {
        flat: { p50: flatP50, p99: round2(median(results.map((r) => r.flat.p99))), requests: Math.min(...results.map((r) => r.flat.requests)) },
        history: { p50: historyP50, p99: round2(median(results.map((r) => r.history.p99))), requests: Math.min(...results.map((r) => r.history.requests)) },
        historyOverFlat: ratios(results.map((r) => r.history.p50), results.map((r) => r.flat.p50)),
      };
    };
    const gw = row('gateway');
    const ref = row('reference');
    const ratioFlat = ratios(s7.get('gateway')!.map((r) => r.flat.p50), s7.get('reference')!.map((r) => r.flat.p50));
    const ratioHistory = ratios(s7.get('gateway')!.map((r) => r.history.p50), s7.get('reference')!.map((r) => r.history.p50));
    report.S7 = { gateway: gw, reference: ref, latencyRatioFlat: ratioFlat, latencyRatioHistory: ratioHistory, runs: Object.fromEntries(s7) };
    console.log(`\n### S7 one-month list, sequential on one connection: 1 booking vs ${S7_HISTORY.toLocaleString('en')} past bookings (+3 in the window)\n`);
    console.log(
      markdownTable(
        ['target', '1 booking p50 / p99 ms', 'history p50 / p99 ms', 'history/flat p50', 'requests per series (min)'],
        [
          ['gateway', `${gw.flat.p50} / ${gw.flat.p99}`, `${gw.history.p50} / ${gw.history.p99}`, range(gw.historyOverFlat, 2), `${gw.flat.requests} / ${gw.history.requests}`],
          ['reference', `${ref.flat.p50} / ${ref.flat.p99}`, `${ref.history.p50} / ${ref.history.p99}`, range(ref.historyOverFlat, 2), `${ref.flat.requests} / ${ref.history.requests}`],
        ],
      ),
    );
    console.log(`\ngateway/reference p50 latency: 1 booking ${range(ratioFlat, 2)}, history ${range(ratioHistory, 2)}`);
    compact.push([
      `S7 history (p50 ms, 1 vs ${S7_HISTORY / 1000}k past)`,
      `${gw.flat.p50} → ${gw.history.p50} ms`,
      `${ref.flat.p50} → ${ref.history.p50} ms`,
      `${range(ratioHistory, 2)} (latency, history)`,
    ]);
  }

  // ---- S8 (before S6/S5, like S7)
  if (runs('S8')) {
    const slots = await assertSameAvailability(targets, availability);
    note(`S8: ${availability.length} agents, ${S8_BOOKINGS_PER_AGENT} bookings each in ${S8_FROM.slice(0, 10)} – ${S8_TO.slice(0, 10)}; a request answers ${slots} slots`);
    for (const target of targets) await load(target, -1, availabilityRequests(availability), WARM_UP_SECONDS);
    const s8 = new Map<TargetName, LoadRun[]>([['gateway', []], ['reference', []]]);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await alternate(round, targets, (target) => load(target, round, availabilityRequests(availability)));
      for (const [name, run] of results) {
        s8.get(name)!.push(run);
        if (run.non2xx || run.errors) problems.push(`S8 ${name} round ${round + 1}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        note(`S8 round ${round + 1} ${name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
      }
    }
    // Latency of one request at a time (under load, p50 is mostly waiting for the two cores).
    const sequential = new Map<TargetName, { p50: number; p99: number; requests: number }[]>([['gateway', []], ['reference', []]]);
    for (let round = 0; round < ROUNDS; round++) {
      const results = await alternate(round, targets, (target) => sequentialAvailability(target, availability));
      for (const [name, result] of results) {
        sequential.get(name)!.push(result);
        note(`S8 round ${round + 1} ${name}, sequential: p50 ${result.p50} ms, p99 ${result.p99} ms (${result.requests} requests)`);
      }
    }
    const unloaded = (name: TargetName) => ({
      p50: round2(median(sequential.get(name)!.map((r) => r.p50))),
      p99: round2(median(sequential.get(name)!.map((r) => r.p99))),
    });
    const gw = summariseRuns(s8.get('gateway')!);
    const ref = summariseRuns(s8.get('reference')!);
    const ratio = ratios(s8.get('gateway')!.map((run) => run.rps), s8.get('reference')!.map((run) => run.rps));
    report.S8 = {
      agents: availability.length,
      bookingsPerAgent: S8_BOOKINGS_PER_AGENT,
      slotsPerAnswer: slots,
      gateway: gw,
      reference: ref,
      ratio,
      sequential: { gateway: unloaded('gateway'), reference: unloaded('reference') },
      runs: Object.fromEntries(s8),
    };
    console.log(`\n### S8 GET /api/availability (${availability.length} agents × ${S8_BOOKINGS_PER_AGENT} bookings in 30 days, each asking about the other ${availability.length - 1})\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway', gw), loadRow('reference', ref)]));
    console.log(`\nsequential (one connection): gateway p50 ${unloaded('gateway').p50} ms, p99 ${unloaded('gateway').p99} ms; reference p50 ${unloaded('reference').p50} ms, p99 ${unloaded('reference').p99} ms`);
    console.log(`\ngateway/reference req/s: ${range(ratio, 2)}`);
    compact.push([
      `S8 availability (${availability.length} agents × ${S8_BOOKINGS_PER_AGENT})`,
      `${range(gw.rps)} req/s, p50 ${gw.p50}, p99 ${gw.p99} ms; alone p50 ${unloaded('gateway').p50} ms`,
      `${range(ref.rps)} req/s, p50 ${ref.p50}, p99 ${ref.p99} ms; alone p50 ${unloaded('reference').p50} ms`,
      range(ratio, 2) + cpuRatioText(s8.get('gateway')!, s8.get('reference')!),
    ]);
  }

  // ---- S6
  if (runs('S6')) {
    const agent = agents[0]!;
    const group = await SubscriberProcesses.start(gateway, agent, S6_PROCESSES, S6_SOCKETS, S6_SUBSCRIBERS);
    subscriberProcesses = group;
    const errors: string[] = [];
    // A warm-up event proves every subscription is live before anything is timed.
    const warmUp = await postJson(gateway.base, '/api/bookings', JSON.parse(bookingBody(agent, Date.UTC(2114, 0, 1), 1)) as unknown, agent);
    if (warmUp.status !== 201) throw new Error(`S6 warm-up create: ${warmUp.status} ${JSON.stringify(warmUp.body)}`);
    let status = await group.status();
    const live = await waitFor(async () => {
      status = await group.status();
      errors.push(...status.errors);
      return status.live === status.subscriptions;
    }, 30_000);
    const subscriptionCount = status.subscriptions;
    note(`S6: ${subscriptionCount} subscriptions on ${S6_SOCKETS} sockets in ${S6_PROCESSES} processes, ${status.live} live${live ? '' : ' (not all!)'}`);
    await group.collect();
    const perRound: {
      round: number;
      /** From the commit (pg_xact_commit_timestamp); null when the database does not track commit times. */
      p50: number | null;
      p99: number | null;
      /** From the event's createdAt (the clock read before the write was sent), as earlier reports measured. */
      createdP50: number;
      createdP99: number;
      commitAfterCreatedP50: number | null;
      firstReceiptP50: number;
      lastReceiptP50: number;
      lastReceiptMax: number;
      deliveries: number;
      complete: number;
      createMs: number;
      drainMs: number;
    }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const tracked: string[] = [];
      const start = Date.UTC(s6Year(round), 0, 1);
      const started = performance.now();
      for (let i = 0; i < S6_CREATES; i++) {
        const wait = started + i * S6_INTERVAL_MS - performance.now();
        if (wait > 0) await sleep(wait);
        const created = await postJson(gateway.base, '/api/bookings', JSON.parse(bookingBody(agent, start + i * 60 * MINUTE, 30)) as unknown, agent);
        if (created.status !== 201) throw new Error(`S6 create: ${created.status} ${JSON.stringify(created.body)}`);
        tracked.push(String(created.body.id));
      }
      const createMs = Math.round(performance.now() - started);
      await waitFor(async () => {
        const progress = await group.status();
        errors.push(...progress.errors);
        return progress.fewest >= S6_CREATES;
      }, 60_000);
      const drainMs = Math.round(performance.now() - started);
      // An event can arrive before its create's response: receipts are matched to the created ids here.
      const collected = await group.collect();
      const subscribers = collected.receipts.map((receipts) => ({ receipts }));
      const eventCreatedAt = collected.createdAt;
      const complete = () => subscribers.filter((s) => tracked.every((id) => s.receipts.has(id))).length;
      // The issue's measure is commit → subscriber: PostgreSQL's commit time of each event's transaction.
      const { rows: commits } = await db!.query<{ id: string; committed: number | null }>(
        `select booking_id::text as id, extract(epoch from pg_xact_commit_timestamp(xmin)) * 1000 as committed
           from booking_events where booking_id = any($1::uuid[]) and type = 'booking.created'`,
        [tracked],
      );
      const committedAt = new Map(commits.filter((row) => row.committed !== null).map((row) => [row.id, Number(row.committed)]));
      const byCommit = committedAt.size === tracked.length;
      const origin = (id: string) => (byCommit ? committedAt.get(id)! : eventCreatedAt.get(id)!);
      const receiptsOf = (id: string) => subscribers.flatMap((s) => (s.receipts.has(id) ? [s.receipts.get(id)!] : []));
      const perEvent = tracked.map((id) => ({ id, receipts: receiptsOf(id) }));
      const sinceOrigin = perEvent.flatMap(({ id, receipts }) => receipts.map((at) => at - origin(id)));
      const sinceCreated = perEvent.flatMap(({ id, receipts }) => receipts.map((at) => at - eventCreatedAt.get(id)!));
      // Per event: when its first and its last subscriber had it (how long one fan-out takes vs. slow events).
      const firstReceipt = perEvent.map(({ id, receipts }) => Math.min(...receipts) - origin(id));
      const lastReceipt = perEvent.map(({ id, receipts }) => Math.max(...receipts) - origin(id));
      const result = {
        round,
        p50: byCommit ? round1(percentile(sinceOrigin, 50)) : null,
        p99: byCommit ? round1(percentile(sinceOrigin, 99)) : null,
        createdP50: round1(percentile(sinceCreated, 50)),
        createdP99: round1(percentile(sinceCreated, 99)),
        commitAfterCreatedP50: byCommit ? round1(percentile(tracked.map((id) => committedAt.get(id)! - eventCreatedAt.get(id)!), 50)) : null,
        firstReceiptP50: round1(percentile(firstReceipt, 50)),
        lastReceiptP50: round1(percentile(lastReceipt, 50)),
        lastReceiptMax: round1(Math.max(...lastReceipt)),
        deliveries: sinceCreated.length,
        complete: complete(),
        createMs,
        drainMs,
      };
      perRound.push(result);
      note(
        `S6 round ${round + 1}: ${result.deliveries} deliveries; commit → receipt p50 ${result.p50 ?? 'n/a'} ms, p99 ${result.p99 ?? 'n/a'} ms; ` +
          `createdAt → receipt p50 ${result.createdP50} ms, p99 ${result.createdP99} ms (commit p50 ${result.commitAfterCreatedP50 ?? 'n/a'} ms after createdAt); ` +
          `per event from ${byCommit ? 'commit' : 'createdAt'}: first receipt p50 ${result.firstReceiptP50} ms, last receipt p50 ${result.lastReceiptP50} ms (max ${result.lastReceiptMax}); ` +
          `${result.complete}/${subscribers.length} subscribers got all ${S6_CREATES}`,
      );
      if (result.complete !== subscribers.length) problems.push(`S6 round ${round + 1}: only ${result.complete} of ${subscribers.length} subscribers received all ${S6_CREATES} events`);
    }
    if (errors.length) problems.push(`S6: ${errors.length} subscription errors, first: ${errors[0]}`);
    await group.stop();
    subscriberProcesses = undefined;
    const subscribers = { length: subscriptionCount };
    report.S6 = { subscribers: subscriptionCount, sockets: S6_SOCKETS, processes: S6_PROCESSES, intervalMs: S6_INTERVAL_MS, creates: S6_CREATES, rounds: perRound, errors: errors.length };
    const fromCommit = perRound.every((r) => r.p50 !== null);
    console.log(`\n### S6 ${subscribers.length} graphql-ws subscribers of one agent (${S6_SOCKETS} sockets in ${S6_PROCESSES} processes), ${S6_CREATES} sequential creates ${S6_INTERVAL_MS > 0 ? `one every ${S6_INTERVAL_MS} ms` : 'back to back'}: ${fromCommit ? 'commit' : 'event createdAt'} → receipt\n`);
    console.log(
      markdownTable(
        ['round', 'deliveries', 'commit → receipt p50 / p99 ms', 'createdAt → receipt p50 / p99 ms', 'per event: first receipt p50', 'last receipt p50 (max)', 'subscribers with all events', 'creates took ms', 'all delivered after ms'],
        perRound.map((r) => [
          r.round + 1,
          r.deliveries,
          r.p50 === null ? 'n/a' : `${r.p50} / ${r.p99}`,
          `${r.createdP50} / ${r.createdP99}`,
          r.firstReceiptP50,
          `${r.lastReceiptP50} (${r.lastReceiptMax})`,
          `${r.complete}/${subscribers.length}`,
          r.createMs,
          r.drainMs,
        ]),
      ),
    );
    const p50 = summary(perRound.map((r) => r.p50 ?? r.createdP50));
    const p99 = summary(perRound.map((r) => r.p99 ?? r.createdP99));
    const createdP99 = summary(perRound.map((r) => r.createdP99));
    compact.push([
      `S6 fan-out to ${subscribers.length} subscribers`,
      `${fromCommit ? 'commit' : 'createdAt'} → receipt p50 ${range(p50, 1)} ms, p99 ${range(p99, 1)} ms${fromCommit ? ` (from createdAt: p99 ${range(createdP99, 1)})` : ''}, ` +
        `${perRound.every((r) => r.complete === subscribers.length) ? 'all delivered' : 'MISSING deliveries'}`,
      'n/a',
      'n/a',
    ]);
  }

  // ---- S5 (last: its webhook deliveries keep the gateway's job queue busy afterwards)
  if (runs('S5')) {
    let delivered = 0;
    receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        delivered++;
        response.statusCode = 204;
        response.end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const registerStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let n = next++; n < agents.length * S5_WEBHOOKS_PER_AGENT; n = next++) {
          const agent = agents[n % agents.length]!;
          const created = await postJson(gateway.base, '/api/webhooks', { url: `${hookUrl}/${n}` }, agent);
          if (created.status !== 201) throw new Error(`S5 webhook registration: ${created.status} ${JSON.stringify(created.body)}`);
        }
      }),
    );
    note(`S5: registered ${agents.length * S5_WEBHOOKS_PER_AGENT} webhooks through POST /api/webhooks in ${((performance.now() - registerStarted) / 1000).toFixed(1)} s`);
    const spread = Array.from({ length: S5_SUBSCRIBERS }, (_, i) => agents[Math.floor((i * agents.length) / S5_SUBSCRIBERS)]!);
    const { clients, subscribers, errors } = await subscribe(gateway, spread, S5_SUBSCRIBERS);
    wsClients.push(...clients);
    await sleep(1000);

    const s5: (LoadRun & { events: number; deliveredDuring: number; expectedDeliveries: number; backlogAfter: number; drainedMs: number | null })[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const eventsBefore = subscribers.reduce((sum, s) => sum + s.received, 0);
      const deliveredBefore = delivered;
      const run = await sqlStatsOf(round === 0 ? 'S5 round 1 (timed run only)' : undefined, () => load(gateway, round, createRequests(agents, s5Year(round))));
      checkAllCreated('S5', 'gateway', run);
      const deliveredDuring = delivered - deliveredBefore;
      const expectedDeliveries = (run.statuses['201'] ?? 0) * S5_WEBHOOKS_PER_AGENT;
      const backlogAfter = expectedDeliveries - deliveredDuring;
      // Let the queue drain (bounded) so the next round starts from the same state.
      const drainStarted = performance.now();
      const drained = await waitFor(() => delivered - deliveredBefore >= expectedDeliveries, SECONDS * 3000);
      const drainedMs = drained ? Math.round(performance.now() - drainStarted) : null;
      const events = subscribers.reduce((sum, s) => sum + s.received, 0) - eventsBefore;
      s5.push({ ...run, events, deliveredDuring, expectedDeliveries, backlogAfter, drainedMs });
      note(
        `S5 round ${round + 1}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}; ${events} subscriber events; webhooks ${deliveredDuring}/${expectedDeliveries} delivered during the run, ` +
          (drained ? `the rest within ${drainedMs} ms` : `${expectedDeliveries - (delivered - deliveredBefore)} still queued after ${SECONDS * 3} s`),
      );
    }
    if (errors.length) problems.push(`S5: ${errors.length} subscription errors, first: ${errors[0]}`);
    const gw = summariseRuns(s5);
    const base = summariseRuns(s1.get('gateway')!);
    const ratio = ratios(s5.map((run) => run.rps), s1.get('gateway')!.map((run) => run.rps));
    report.S5 = {
      webhooks: agents.length * S5_WEBHOOKS_PER_AGENT,
      subscribers: subscribers.length,
      gateway: gw,
      gatewayS1: base,
      ratio,
      runs: s5,
    };
    console.log(`\n### S5 POST /api/bookings with ${agents.length * S5_WEBHOOKS_PER_AGENT} webhooks and ${subscribers.length} subscribers (gateway) vs the gateway's S1\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway, webhooks + subscribers', gw), loadRow('gateway, S1 (none)', base)]));
    console.log(
      '\n' +
        markdownTable(
          ['round', 'created', 'subscriber events', 'webhooks delivered during run', 'expected', 'drained after run (ms)'],
          s5.map((r) => [r.round + 1, r.statuses['201'] ?? 0, r.events, r.deliveredDuring, r.expectedDeliveries, r.drainedMs ?? `not within ${SECONDS * 3} s`]),
        ),
    );
    console.log(`\nS5/S1 req/s (gateway): ${range(ratio, 2)}`);
    compact.push([`S5 create with ${S5_WEBHOOKS_PER_AGENT} webhooks/agent + ${subscribers.length} subs`, `${range(gw.rps)} req/s, p99 ${gw.p99} ms`, 'n/a', `${range(ratio, 2)} (vs gateway S1)`]);
  }

  if (runs('S9')) await replicaReads(databaseUrl, agents, targets[0]!);

  console.log(`\n## Summary (${ROUNDS} round(s) × ${SECONDS} s, ${CONNECTIONS} connections, ${agents.length} agents${SMOKE ? ', smoke' : ''})\n`);
  console.log(markdownTable(['scenario', 'gateway', 'reference', 'gateway/reference'], compact));
  console.log('\nRatios are medians of per-round ratios (min–max). A req/s ratio below 1, or a latency, wall-time or CPU-per-request ratio above 1, means the gateway is slower.');
  if (problems.length) {
    console.log('\nRules broken:');
    for (const problem of problems) console.log(`  - ${problem}`);
  }
  console.log(`\nbench took ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`);
  console.log(JSON.stringify({ settings: { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, agents: agents.length, smoke: SMOKE, scenarios: [...SELECTED] }, ...report, problems }));
}

// ---------------------------------------------------------------------------------------------------
// S9: S2 from a streaming replica

/** The S9 standby (removed by cleanup). */
let replica: StreamingReplica | undefined;
const S9_METRICS_TOKEN = 'bench-s9-metrics-token-0123456789';

/**
 * S9: the S2 requests against a gateway reading from a standby of the bench's cluster, alternating round
 * by round with the gateway that reads from the primary. The agents wrote in S1 (their tokens are
 * remembered): each list costs the primary one lookup of the caller's floor and the replica the list.
 */
async function replicaReads(databaseUrl: string, agents: Agent[], primaryGateway: Target): Promise<void> {
  if (!clusterDir || !db) {
    problems.push('S9 needs the embedded cluster (unset DATABASE_URL)');
    return;
  }
  const durable = (await db.query<{ fsync: string }>('show fsync')).rows[0]!.fsync === 'on';
  replica = await startStreamingReplica({ primaryUrl: databaseUrl, primaryDataDir: clusterDir, durable });
  const databaseName = new URL(databaseUrl).pathname.slice(1);
  const withReplica = await startChild('gateway-replica', ['dist/src/main.js'], {
    DATABASE_URL: databaseUrl,
    DATABASE_REPLICA_URLS: replica.urlFor(databaseName),
    BOOKING_CAP: '100000000',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    RATE_LIMIT_ANON_PER_MIN: '1000000000',
    RATE_LIMIT_AUTH_PER_MIN: '1000000000',
    PRICE_PROVIDERS: '',
    GRAPHQL_EXPLORER: 'false',
    METRICS_TOKEN: S9_METRICS_TOKEN,
  });
  const serving = async () => {
    const report = (await (await fetch(`${withReplica.base}/api/status`)).json()) as { services: { database: { replicas: { status: string; lag_ms: number }[] } } };
    return report.services.database.replicas[0];
  };
  if (!(await waitFor(async () => (await serving())?.status === 'operational', 30_000))) throw new Error(`S9: the replica does not serve reads: ${JSON.stringify(await serving())}`);
  const targets: Target[] = [primaryGateway, { name: 'gateway-replica', base: withReplica.base, pid: withReplica.pid }];
  note(`S9: standby on port ${replica.port} (${durable ? 'fsync on' : 'fsync off'}, as the primary), gateway-replica ${withReplica.base}`);
  const runs9 = new Map<TargetName, (LoadRun & { replicaCpuMs: number | null })[]>([['gateway', []], ['gateway-replica', []]]);
  const timed = async (target: Target, round: number, seconds = SECONDS) => {
    const before = await readCpu(undefined, replica!.dataDir);
    const run = await load(target, round, listRequests(agents), seconds);
    const after = await readCpu(undefined, replica!.dataDir);
    return { ...run, replicaCpuMs: cpuMsPerRequest(before, after, run.requests).database };
  };
  // The replica's gateway is a fresh process: warmed up as long as the other was by the earlier scenarios' warm-ups.
  for (const target of targets) await timed(target, -1, target.name === 'gateway-replica' ? 3 * WARM_UP_SECONDS : WARM_UP_SECONDS);
  const routesBefore = await replicaRoutes(withReplica.base);
  for (let round = 0; round < ROUNDS; round++) {
    const results = await alternate(round, targets, (target) => timed(target, round));
    for (const [name, run] of results) {
      runs9.get(name)!.push(run);
      if (run.non2xx || run.errors) problems.push(`S9 ${name} round ${round + 1}: ${run.non2xx} non-2xx, ${run.errors} errors`);
      note(`S9 round ${round + 1} ${name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)} (primary), standby ${run.replicaCpuMs ?? '?'} ms`);
    }
  }
  const routes = await replicaRoutes(withReplica.base);
  const fromReplica = (routes.get('replica') ?? 0) - (routesBefore.get('replica') ?? 0);
  const all = [...routes].reduce((sum, [route, n]) => sum + n - (routesBefore.get(route) ?? 0), 0);
  if (all === 0 || fromReplica / all < 0.99) problems.push(`S9: the standby served ${fromReplica} of ${all} lists (routes ${JSON.stringify(Object.fromEntries(routes))})`);
  const lag = await serving();
  const primaryRuns = runs9.get('gateway')!;
  const replicaRuns = runs9.get('gateway-replica')!;
  const gw = summariseRuns(primaryRuns);
  const rep = summariseRuns(replicaRuns);
  const standbyCpu = (runs: (LoadRun & { replicaCpuMs: number | null })[]) => medianOrNull(runs.map((run) => run.replicaCpuMs)) ?? 'n/a';
  const ratio = ratios(replicaRuns.map((run) => run.rps), primaryRuns.map((run) => run.rps));
  report.S9 = { primary: gw, replica: rep, ratio, standbyCpuMs: { primary: standbyCpu(primaryRuns), replica: standbyCpu(replicaRuns) }, servedByStandby: fromReplica, lists: all, lagMs: lag?.lag_ms ?? null };
  console.log(`
### S9 S2 from a streaming replica beside S2 from the primary (${durable ? 'durable' : 'fsync off'})
`);
  console.log(
    markdownTable(
      [...LOAD_HEADER.slice(0, 7), 'primary PostgreSQL CPU ms/req', 'standby PostgreSQL CPU ms/req'],
      [
        [...loadRow('S2 from the primary', gw).slice(0, 7), gw.cpuMs.database ?? 'n/a', standbyCpu(primaryRuns)],
        [...loadRow('S2 from the replica', rep).slice(0, 7), rep.cpuMs.database ?? 'n/a', standbyCpu(replicaRuns)],
      ],
    ),
  );
  console.log(`
replica/primary req/s: ${range(ratio, 2)}; the standby served ${fromReplica} of ${all} lists; its lag after the runs ${lag?.lag_ms ?? '?'} ms`);
  compact.push(['S9 S2 from a replica (vs S2 from the primary)', `${range(rep.rps)} req/s, p99 ${rep.p99} ms; primary PostgreSQL ${rep.cpuMs.database ?? '?'} ms/req`, `(primary) ${range(gw.rps)} req/s; ${gw.cpuMs.database ?? '?'} ms/req`, `${range(ratio, 2)} (replica/primary)`]);
}

/** A gateway's gateway_db_replica_reads_total by route. */
async function replicaRoutes(base: string): Promise<Map<string, number>> {
  const exposition = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${S9_METRICS_TOKEN}` } })).text();
  return new Map([...exposition.matchAll(/^gateway_db_replica_reads_total\{route="(\w+)"\} (\d+)/gm)].map((match) => [match[1]!, Number(match[2])]));
}

/** With BENCH_SQL_STATS=1, where the database spent its time during `work` (`label` given), by statement. */
async function sqlStatsOf<T>(label: string | undefined, work: () => Promise<T>): Promise<T> {
  if (!SQL_STATS || label === undefined || !db) return work();
  await db.query('select pg_stat_statements_reset()');
  const result = await work();
  await printStatementStats(db, label);
  return result;
}

async function printStatementStats(pool: pg.Pool, label: string): Promise<void> {
  const { rows } = await pool.query<{ calls: string; total_ms: number; mean_ms: number; rows: string; query: string }>(
    `select calls, round(total_exec_time::numeric, 0)::float as total_ms, round(mean_exec_time::numeric, 3)::float as mean_ms, rows,
            left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      order by total_exec_time desc limit 20`,
  );
  console.log(`\n### ${label}: database time by statement (pg_stat_statements, top 20)\n`);
  console.log(markdownTable(['calls', 'total ms', 'mean ms', 'rows', 'statement'], rows.map((r) => [r.calls, r.total_ms, r.mean_ms, r.rows, r.query.replaceAll('|', '\\|')])));
}

try {
  await main();
} catch (error) {
  problems.push(String(error instanceof Error ? (error.stack ?? error.message) : error));
  console.error(error);
} finally {
  if (!interrupted) await cleanup();
}
process.exit(problems.length ? 1 : 0);
