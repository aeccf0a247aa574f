/**
 * `npm run bench`: the gateway (`node dist/src/main.js`) measured against the hand-written reference
 * server (bench/reference/server.ts: plain Fastify + pg, same SQL semantics, no events), both as child
 * processes on one throwaway embedded PostgreSQL (or DATABASE_URL), with the same seeded data.
 *
 * Durability (BENCH_DURABILITY): `durable` (the default) runs the embedded PostgreSQL with its stock
 * settings, fsync, synchronous_commit and full_page_writes on, as operators run it: every commit that
 * wrote something waits for its WAL flush, which is where a write's time goes on real storage. `cpu` runs
 * it with all three off (the bench's settings before the durable table): the numbers are then CPU, not
 * disk. `both` runs the whole bench twice, durable first, each pass on a cluster of its own, and prints a
 * summary table for each. Both targets always share one cluster and its settings. The cluster also
 * records commit times (track_commit_timestamp, for S6 and S10) and, with W or BENCH_SQL_STATS=1, loads
 * pg_stat_statements; otherwise it is PostgreSQL 18's defaults (128 MB shared_buffers, …).
 *
 * Scenarios (each timed run alternates gateway and reference; ratios are gateway / reference):
 *   S1  POST /api/bookings, a fresh 1-minute slot per request, agents round-robin (all 201)
 *   S2  GET /api/bookings over a 3-month window that holds 50+ rows, limit 50, agents round-robin
 *   S3  the same list through GraphQL (gateway only; against the reference's S2 of the same round)
 *   S4  200 simultaneous creates of one slot: exactly one 201, the rest 409 slot_taken, no 5xx
 *   S5  S1 with 10 webhooks per agent and 200 graphql-ws subscribers (gateway only), for agents of its own seeded
 *       as S1's are, in S1's rounds (its ratio is to the gateway's S1 of its round; each S5 run waits for its
 *       deliveries to drain before the next run starts)
 *   S6  1,000 subscribers of one agent (in processes of their own, subscribers.ts), 200 creates one after another,
 *       one every BENCH_S6_INTERVAL_MS: commit (PostgreSQL's commit timestamp) → receipt latency, and from the
 *       event's createdAt (the clock read before the write) as earlier reports measured
 *   S7  one-month list latency, sequential: an agent with 1 booking vs one with 100,000 past bookings
 *   S8  GET /api/availability: 10 agents with 500 bookings each in a 30-day window, each asking about the
 *       other nine over that window (30-minute slots on a 15-minute grid, limit 50); the reference runs
 *       the same named statement over node-postgres
 *   S9  S1's load for agents holding 10 live bookings vs agents holding 10,000 (50 agents a group, 20 in
 *       smoke; seeded with SQL as create_booking writes them: booking, slot, booking.created event), both
 *       targets; the ratio many/few per target (the issue's target: within 10 %). The creates add live
 *       bookings as they go (future slots, as agents book): the live counts before and after are printed
 *   S10 events at scale: 10,000 subscriptions on 1,000 sockets of 100 agents (10 sockets of 10 subscriptions
 *       per agent, from 127.0.0.2–127.0.0.5, 250 sockets each: one address may hold 500), 20 creates a second
 *       spread over the agents: commit → receipt p50/p99, every event to all 100 of its agent's subscriptions
 *       (rule); the gateway's heap and RSS idle, with the sockets open, with the subscriptions, each after a
 *       forced GC, and after the sockets closed: memory per socket and per idle subscription (issue target
 *       ≤ 8 KB heap). The subscriptions open at BENCH_S10_SUBSCRIBE_PER_SECOND (1,000; 0 = all at once, as when
 *       every client reconnects after a deploy). Gateway only; its memory is read through the inspector
 *       (inspector.ts), opened by SIGUSR1 only here
 *   W   (not in the default set) the write path, per request, gateway vs reference, for a create
 *       (POST /api/bookings), a cancel (DELETE /api/bookings/{id}) and a proposal accept (PATCH
 *       /api/proposals/{id}/accept, the target's booking of exactly that range moving to the proposer):
 *       BENCH_W_REQUESTS requests each at BENCH_CONNECTIONS and a quarter of them one at a time (where no
 *       group commit shares a flush between requests), with commits, WAL flushes and waits, and the statements
 *       PostgreSQL ran for them (pg_stat_statements: round trips, NOTIFYs, WAL per statement); first, what the
 *       servers' background costs with no requests
 *   S12 S1 for agents with availability rules (gateway only; against the gateway's S1 of the same round): working
 *       hours every day 00:00–24:00 in Europe/Berlin, buffers of 5 minutes before and after, a daily limit of 1,000
 *       (never reached) and enforceOnOwnBookings, so every create evaluates them; a fresh 1-minute slot every
 *       15 minutes (the buffers keep consecutive minutes apart), agents round-robin (all 201); their calendars
 *       hold what S1's agents' hold (200 bookings through 2030). The rules' cost on the write path (issue 27's
 *       target: within 15 %)
 *   S13 S8 for ten agents with rules (gateway only; against the gateway's S8 of the same round): working hours
 *       Monday–Friday 07:00–12:00 and 13:00–20:00 and Saturday 09:00–13:00 in Europe/Berlin, a buffer of 5 minutes
 *       after each booking, limits of 18 a day and 150 a week, binding every agent (enforceOnOwnBookings); S8's 500
 *       bookings each, 10 minutes long (with the buffer, each blocks what an S8 booking blocks). The rules' cost on
 *       availability (issue 27's target: within 20 %)
 *   S11 S2 served from a streaming replica (a second gateway with DATABASE_REPLICA_URLS, the standby made
 *       from the bench's cluster as durable as it) beside S2 from the primary (the gateway); CPU per request
 *       of each gateway, the primary and the standby. Embedded cluster only
 *
 * Every load run reports, per request: the CPU of the target's process and of PostgreSQL's processes
 * (cpu.ts), and what it cost the database (db-cost.ts): commits (commit records in the run's WAL), WAL
 * bytes, the wait events of the busy backends (pg_stat_activity sampled every BENCH_WAIT_SAMPLE_MS), and
 * for writes (S1, S5, W) WAL flushes and transactions, from PostgreSQL's cumulative statistics, which
 * are complete only BENCH_STATS_SETTLE_MS after the run (the bench waits that long around those runs, so
 * they also count the servers' background work in those waits). A write run starts right after a
 * CHECKPOINT: every run pays the full-page images of the pages it is the first to change (without it,
 * whichever target ran first after a checkpoint paid them for both).
 *
 * Environment: BENCH_DURABILITY (durable | cpu | both), BENCH_ROUNDS (3), BENCH_SECONDS (10 per timed run),
 * BENCH_CONNECTIONS (16), BENCH_SCENARIOS (S1,…,S11 by default; a subset, W included only when named),
 * BENCH_SMOKE=1 (1 round of 2 s, 100 agents, fewer subscribers, smaller S9/S10/W),
 * BENCH_S6_SOCKETS (100: WebSocket connections the 1,000 S6 subscriptions share; 1000 = one each),
 * BENCH_S6_PROCESSES (2: processes the S6 and S10 subscribers run in, apart from the load generator; see subscribers.ts),
 * BENCH_S6_INTERVAL_MS (50: a create starts this long after the previous one started, or when it ends if
 * later; 20 events/s is 20,000 messages/s to the subscribers. 0 = back to back: the machine's two cores are
 * then saturated by gateway, PostgreSQL and subscribers together, and the latency is mostly queueing; S10
 * paces its creates the same way),
 * BENCH_W_REQUESTS (2,000; 400 in smoke), BENCH_WAIT_SAMPLE_MS (10; 0 = no sampling),
 * BENCH_STATS_SETTLE_MS (10,500; 0 = no flush and transaction counts, and no waiting for them),
 * DATABASE_URL (an existing database instead of the embedded one; the bench adds its own agents and makes
 * one pass with that server's settings, which the summary names; BENCH_DURABILITY does not apply),
 * BENCH_S10_SUBSCRIBE_PER_SECOND (1,000; 0 = all at once),
 * BENCH_S10_PROFILE_DIR (a directory: S10 writes the gateway's heap snapshot at each memory stage and a CPU
 * profile of the subscriptions opening and of each round there, through the inspector; the figures of a
 * profiled run are not comparable with others, and a heap snapshot stops the gateway for seconds, so
 * sockets whose pong comes late are closed), BENCH_S10_PROFILE (cpu,heap by default; alloc adds the sampled
 * allocations of each phase as `.heapprofile`, garbage included; promoted, only what outlived a young collection),
 * BENCH_SQL_STATS=1 (embedded database only: pg_stat_statements on; the statements that took the most
 * database time in the first timed round of S1 (with S12 and S5 when they run), S2 (each target) and S3 are printed after it),
 * BENCH_GATEWAY_NODE_ARGS (extra node flags for the gateway, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"),
 * BENCH_REFERENCE_NODE_ARGS (the same for the reference server).
 * Exits non-zero when a rule is broken (S1/S9/W non-2xx, S4 race outcome, S6/S10 missing deliveries, …).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
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
import { seedAvailabilityBookings } from './availability-seed.js';
import { DbProbe, type DbCost, type WaitShare } from './db-cost.js';
import { GatewayInspector, type MemoryReading } from './inspector.js';
import type { FromSubscribers, SocketPlan, StartSubscribers, SubscribersReceipts, SubscribersStatus, ToSubscribers } from './subscribers.js';
import { LIMIT_SETTINGS } from '../../src/modules/agents/index.js';
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
/** S9: agents a group, and the live bookings each agent of a group holds before the runs. */
const S9_AGENTS = SMOKE ? 20 : 50;
const S9_FEW = 10;
const S9_MANY = 10_000;
/** S10: agents, sockets per agent, subscriptions per socket; local addresses the sockets leave from. */
const S10_AGENTS = 100;
const S10_SOCKETS_PER_AGENT = 10;
const S10_SUBSCRIPTIONS_PER_SOCKET = 10;
const S10_LOCAL_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const S10_SUBSCRIBE_PER_SECOND = Number(process.env.BENCH_S10_SUBSCRIBE_PER_SECOND ?? 1_000);
/** S10: where to write the gateway's heap snapshots (per stage) and CPU profiles (subscribing, the rounds); none when unset. */
const S10_PROFILE_DIR = process.env.BENCH_S10_PROFILE_DIR || undefined;
const S10_PROFILES = new Set((process.env.BENCH_S10_PROFILE ?? 'cpu,heap').split(',').filter(Boolean));
for (const kind of S10_PROFILES) if (!['cpu', 'heap', 'alloc', 'promoted'].includes(kind)) throw new Error(`BENCH_S10_PROFILE lists cpu, heap, alloc and promoted, not ${kind}`);
const S10_CPU_PROFILES = S10_PROFILE_DIR !== undefined && S10_PROFILES.has('cpu');
const S10_HEAP_SNAPSHOTS = S10_PROFILE_DIR !== undefined && S10_PROFILES.has('heap');
const S10_ALLOCATION_SAMPLES = S10_PROFILE_DIR === undefined ? undefined : S10_PROFILES.has('alloc') ? 'all' : S10_PROFILES.has('promoted') ? 'outlived young' : undefined;
if (!Number.isInteger(S10_SUBSCRIBE_PER_SECOND) || S10_SUBSCRIBE_PER_SECOND < 0) throw new Error('BENCH_S10_SUBSCRIBE_PER_SECOND must be a whole number, 0 or more');
/** S10 creates a round: 20 a second for about BENCH_SECONDS, the same number for every agent. */
const S10_CREATES = S10_AGENTS * Math.max(1, Math.round((20 * SECONDS) / S10_AGENTS));
const W_REQUESTS = positive('BENCH_W_REQUESTS', SMOKE ? 400 : 2000);
const WAIT_SAMPLE_MS = Number(process.env.BENCH_WAIT_SAMPLE_MS ?? 10);
const STATS_SETTLE_MS = Number(process.env.BENCH_STATS_SETTLE_MS ?? 10_500);
for (const [name, value] of [['BENCH_WAIT_SAMPLE_MS', WAIT_SAMPLE_MS], ['BENCH_STATS_SETTLE_MS', STATS_SETTLE_MS]] as const) {
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of milliseconds, 0 or more`);
}
type Durability = 'durable' | 'cpu';
const DURABILITIES: Durability[] = (() => {
  const raw = process.env.BENCH_DURABILITY || 'durable';
  if (raw === 'both') return ['durable', 'cpu'];
  if (raw === 'durable' || raw === 'cpu') return [raw];
  throw new Error(`BENCH_DURABILITY must be durable, cpu or both, not ${raw}`);
})();
const S7_REQUESTS = SMOKE ? 100 : 500;
/** Each S7 series stops early after this long (the history agent can be slow). */
const S7_MAX_SECONDS = SMOKE ? 3 : 8;

const ALL_SCENARIOS = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7', 'S8', 'S9', 'S10', 'S11', 'S12', 'S13', 'W'] as const;
type ScenarioId = (typeof ALL_SCENARIOS)[number];
/** W is a diagnosis (and loads pg_stat_statements for the whole run): only when named. */
const DEFAULT_SCENARIOS = ALL_SCENARIOS.filter((scenario) => scenario !== 'W');
const SELECTED = new Set(
  (process.env.BENCH_SCENARIOS || DEFAULT_SCENARIOS.join(','))
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

/** S12: the rules of its agents (an availability_rules row), and its slot pattern: a 1-minute slot every 15 minutes. */
const S12_RULES = { timeZone: 'Europe/Berlin', weeklyHours: Array<string>(7).fill('{[0,1440)}'), bufferBefore: 5, bufferAfter: 5, dailyLimit: 1000, weeklyLimit: null };
const S12_STEP_MINUTES = 15;
/**
 * S13: the rules of its ten agents (Monday–Friday 07:00–12:00 and 13:00–20:00, Saturday 09:00–13:00), and their
 * bookings: S8's starts, 10 minutes long, so that with the 5-minute buffer after each one blocks what an S8 booking
 * blocks (S8's calendars are valid, so these are). Limits of 18 a day (the seed has at most 17) and 150 a week.
 */
const S13_RULES = {
  timeZone: 'Europe/Berlin',
  weeklyHours: [...Array<string>(5).fill('{[420,720),[780,1200)}'), '{[540,780)}', '{}'],
  bufferBefore: 0,
  bufferAfter: 5,
  dailyLimit: 18,
  weeklyLimit: 150,
};
const S13_BOOKING_MINUTES = 10;

// Years no two timed runs share: the gateway and the reference never book the same calendar minute.
const s1Year = (round: number, target: TargetName) => 2031 + 2 * round + (target === 'gateway' ? 0 : 1);
const s5Year = (round: number) => 2073 + round;
const s4Slot = (round: number, target: TargetName) => Date.UTC(2093, 0, 1 + 2 * round + (target === 'gateway' ? 0 : 1), 10);
const s6Year = (round: number) => 2094 + round;
const warmUpYear = (target: TargetName) => (target === 'gateway' ? 2071 : 2072);
const s10Year = (round: number) => 2120 + round;
/** S9: seeded calendars from 2150 (10,000 bookings two hours apart reach into 2152); each timed run books its own two days of 2153. */
const S9_SEED_START = '2150-01-01T00:00:00.000Z';
const s9Start = (round: number, target: TargetName, group: 'few' | 'many') =>
  Date.UTC(2153, 0, 1 + 2 * (4 * round + (target === 'gateway' ? 0 : 2) + (group === 'few' ? 0 : 1)));
const s9WarmUp = (target: TargetName) => Date.UTC(2154, 6, target === 'gateway' ? 1 : 3);
/**
 * W: every run (round, one-at-a-time or concurrent, target) books days of its own, from 2165 (creates), 2168
 * (bookings to cancel) and 2171 (proposals to accept); `spanDays` is what one run needs.
 */
const wRunIndex = (round: number, sequential: boolean, target: TargetName) => (2 * (round + 1) + (sequential ? 1 : 0)) * 2 + (target === 'gateway' ? 0 : 1);
const W_REGIONS = { create: Date.UTC(2165, 0, 1), cancel: Date.UTC(2168, 0, 1), accept: Date.UTC(2171, 0, 1) } as const;
/** Untimed load before the first round of S1, S2 and S3, so no target is measured cold (JIT, pools, plans). */
const WARM_UP_SECONDS = SMOKE ? 1 : 2;

const MINUTE = 60_000;
/** AGENT_CREATE_PER_MIN, AGENT_FAMILY_MAX and PENDING_PROPOSALS_MAX: the bench makes agents by the thousand, and these bounds are not what it measures. */
const FAN_OUT_BOUND = 1_000_000_000;

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
  /** What the run cost the database, per request (db-cost.ts); null without a probe. */
  db: DbCost | null;
}

interface HttpRequestSpec {
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH';
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

/** `alternate` for runs that are not one per target (S1 and S12, S8 and S13): in turn, the order reversed every other round. */
async function inTurn<K, T>(round: number, keys: K[], work: (key: K) => Promise<T>): Promise<Map<K, T>> {
  const ordered = round % 2 === 0 ? keys : [...keys].reverse();
  const results = new Map<K, T>();
  for (const key of ordered) results.set(key, await work(key));
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

interface LoadOptions {
  /** Timed run length (default BENCH_SECONDS); ignored with `amount`. */
  seconds?: number;
  /** Exactly this many requests instead of a timed run. */
  amount?: number;
  /** Connections (default BENCH_CONNECTIONS). */
  connections?: number;
  /** Also count WAL flushes and transactions (waits BENCH_STATS_SETTLE_MS around the run, see db-cost.ts). */
  settle?: boolean;
  /** A warm-up: nothing measured on the database side. */
  untimed?: boolean;
  /** Run right before the load starts and right after it ends (W: pg_stat_statements of the run alone). */
  beforeRun?: () => Promise<void>;
  afterRun?: () => Promise<void>;
}

const warmUp = (target: Target, request: (n: number) => HttpRequestSpec) => load(target, -1, request, { seconds: WARM_UP_SECONDS, untimed: true });

/** A timed autocannon run; `request(n)` builds the n-th request. */
async function load(target: Target, round: number, request: (n: number) => HttpRequestSpec, options: LoadOptions = {}): Promise<LoadRun> {
  let counter = 0;
  const measuring = options.untimed ? undefined : probe;
  const mark = await measuring?.begin(options.settle ?? false);
  await options.beforeRun?.();
  const cpuBefore = await readCpu(target.pid, clusterDir, probe?.backendPids);
  const started = performance.now();
  let lastResponse = started;
  const result = await autocannon({
    url: target.base,
    connections: options.connections ?? CONNECTIONS,
    ...(options.amount === undefined ? { duration: options.seconds ?? SECONDS } : { amount: options.amount }),
    requests: [{ setupRequest: (base) => ({ ...base, ...request(counter++) }), onResponse: () => void (lastResponse = performance.now()) }],
  });
  // autocannon ends a run on its one-second tick: an `amount` run is timed to its last response instead.
  const elapsedSeconds = (lastResponse - started) / 1000;
  const cpu = cpuMsPerRequest(cpuBefore, await readCpu(target.pid, clusterDir, probe?.backendPids), result.requests.total);
  await options.afterRun?.();
  const db = measuring && mark ? await measuring.end(mark, result.requests.total) : null;
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]));
  return {
    round,
    rps: Math.round(result.requests.total / (options.amount === undefined ? result.duration : elapsedSeconds)),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses,
    cpuMs: cpu,
    db,
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
  /** The agent the bench's agents hang under. */
  rootId: string;
  agents: Agent[];
  /** S7: one booking, in the window. */
  flat: Agent;
  /** S7: S7_HISTORY past bookings, plus three in the window. */
  history: Agent;
  /** S8: agents whose free/busy anyone may ask for, with S8_BOOKINGS_PER_AGENT bookings in the S8 window. */
  availability: Agent[];
  /** S12: as many agents as `agents`, with S12_RULES. */
  ruled: Agent[];
  /** S5: as many agents as `agents`, with the same calendars (their webhooks and subscribers come before S1). */
  notified: Agent[];
  /** S13: S8's agents again, with S13_RULES and their bookings widened by its buffers. */
  ruledAvailability: Agent[];
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

/**
 * Confirmed single bookings as create_booking writes them (booking_insert's row and slot, record_booking_event's
 * booking.created event in each agent's order; no webhook_fanout row: these agents have no webhooks), set-based.
 * `source` selects (id uuid, agent_id uuid, starts_at timestamptz, ends_at timestamptz).
 */
async function insertBookingsAsCreated(pool: pg.Pool, source: string, params: unknown[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query(`create temporary table seed_source on commit drop as ${source}`, params);
    await client.query(
      `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
       select id, agent_id, starts_at, ends_at, 'confirmed', null, '[]', now(), ends_at from seed_source`,
    );
    await client.query(
      'insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until) select id, agent_id, starts_at, ends_at, starts_at, ends_at from seed_source',
    );
    await client.query(
      `insert into booking_events (agent_id, type, booking_id, booking, created_at)
       select b.agent_id, 'booking.created', b.id, booking_item(b), b.created_at
         from seed_source s join bookings b on b.id = s.id order by s.agent_id, s.starts_at`,
    );
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * After seeding: statistics for the planner, and a checkpoint, so the seed's dirty pages are written
 * before anything is timed rather than during a timed run (a durable cluster's checkpoint costs disk).
 */
async function settleSeed(pool: pg.Pool, tables: string, options: { vacuum?: boolean } = {}): Promise<void> {
  await pool.query(`${options.vacuum ? 'vacuum (analyze)' : 'analyze'} ${tables}`);
  await pool.query('checkpoint').catch(() => undefined); // superuser (or pg_checkpoint) only; DATABASE_URL may not be
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
     insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until) select id, agent_id, starts_at, ends_at, starts_at, ends_at from b`;
  const half = Math.ceil(agents.length / 2);
  const work: Promise<unknown>[] = [agents.slice(0, half), agents.slice(half)].map((chunk) =>
    db.query(withSlots(CALENDARS_SQL), [chunk.map((agent) => agent.id), SEED_START, SEED_SPACING_HOURS, BOOKINGS_PER_AGENT]),
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
    work.push(
      seedAvailabilityBookings(db, {
        agentIds: availability.map((agent) => agent.id),
        from: S8_FROM,
        to: S8_TO,
        perAgent: S8_BOOKINGS_PER_AGENT,
        minutes: 15,
        bufferBefore: 0,
        bufferAfter: 0,
      }),
    );
  }
  let notified: Agent[] = [];
  if (runs('S5')) {
    notified = await insertAgents(db, AGENTS, rootId, 'bench-s5-');
    work.push(db.query(withSlots(CALENDARS_SQL), [notified.map((agent) => agent.id), SEED_START, SEED_SPACING_HOURS, BOOKINGS_PER_AGENT]));
  }
  let ruled: Agent[] = [];
  if (runs('S12')) {
    ruled = await insertAgents(db, AGENTS, rootId, 'bench-s12-');
    await insertRules(db, ruled, S12_RULES);
    // The calendars S1's agents have, each slot blocking its range widened by the buffers (as booking_insert writes it).
    work.push(
      db.query(
        `with b as (
           insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
           select gen_random_uuid(), a.id, s.at, s.at + interval '30 minutes', 'confirmed', null, '[]', now(), s.at + interval '30 minutes'
             from unnest($1::uuid[]) as a(id)
            cross join (select $2::timestamptz + i * ($3 * interval '1 hour') as at from generate_series(0, $4 - 1) i) s
           returning id, agent_id, starts_at, ends_at)
         insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
         select id, agent_id, starts_at, ends_at, starts_at - make_interval(mins => $5), ends_at + make_interval(mins => $6) from b`,
        [ruled.map((agent) => agent.id), SEED_START, SEED_SPACING_HOURS, BOOKINGS_PER_AGENT, S12_RULES.bufferBefore, S12_RULES.bufferAfter],
      ),
    );
  }
  let ruledAvailability: Agent[] = [];
  if (runs('S13')) {
    ruledAvailability = await insertAgents(db, S8_AGENTS, rootId, 'bench-s13-');
    await db.query(`update agents set free_busy_visibility = 'anyone' where id = any($1::uuid[])`, [ruledAvailability.map((agent) => agent.id)]);
    await insertRules(db, ruledAvailability, S13_RULES);
    // As booking_insert writes them: each slot blocks its range widened by the agent's buffers.
    work.push(
      seedAvailabilityBookings(db, {
        agentIds: ruledAvailability.map((agent) => agent.id),
        from: S8_FROM,
        to: S8_TO,
        perAgent: S8_BOOKINGS_PER_AGENT,
        minutes: S13_BOOKING_MINUTES,
        bufferBefore: S13_RULES.bufferBefore,
        bufferAfter: S13_RULES.bufferAfter,
      }),
    );
  }
  await Promise.all(work);
  // Availability reads slots index-only; autovacuum would mark the freshly written pages all-visible within a minute.
  if (runs('S8') || runs('S13')) await db.query('vacuum booking_slots');
  await settleSeed(db, 'agents, bookings, booking_slots, availability_rules');
  const count = await db.query<{ n: string }>('select count(*) as n from bookings where agent_id = any($1::uuid[])', [[...agents, flat, history].map((agent) => agent.id)]);
  note(`seeded ${agents.length + 2} agents and ${count.rows[0]!.n} bookings (+ slots) with SQL in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { rootId, agents, flat, history, availability, ruled, ruledAvailability, notified };
}

/** S1's calendars ($1 the agents' ids): BOOKINGS_PER_AGENT 30-minute bookings each, SEED_SPACING_HOURS apart from SEED_START. */
const CALENDARS_SQL = `insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
  select gen_random_uuid(), a.id, s.at, s.at + interval '30 minutes', 'confirmed', null, '[]', now(), s.at + interval '30 minutes'
    from unnest($1::uuid[]) as a(id)
   cross join (select $2::timestamptz + i * ($3 * interval '1 hour') as at from generate_series(0, $4 - 1) i) s`;

interface BenchRules {
  timeZone: string;
  /** Seven int4multiranges as text, Monday first. */
  weeklyHours: string[];
  bufferBefore: number;
  bufferAfter: number;
  dailyLimit: number | null;
  weeklyLimit: number | null;
}

/** Availability rules as PUT /api/agents/{id}/availability-rules stores them, binding the agents' own bookings too. */
async function insertRules(db: pg.Pool, agents: Agent[], rules: BenchRules): Promise<void> {
  await db.query(
    `insert into availability_rules (agent_id, time_zone, weekly_hours, buffer_before_minutes, buffer_after_minutes, minimum_notice_minutes,
                                     maximum_advance_days, daily_limit, weekly_limit, enforce_on_own_bookings, updated_at)
     select id, $2, $3::text[]::int4multirange[], $4, $5, 0, null, $6, $7, true, now() from unnest($1::uuid[]) as a(id)`,
    [agents.map((agent) => agent.id), rules.timeZone, rules.weeklyHours, rules.bufferBefore, rules.bufferAfter, rules.dailyLimit, rules.weeklyLimit],
  );
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

/** S1 (and S5): every request books a fresh minute in `year` for the next agent, round-robin. */
function createRequests(agents: Agent[], year: number) {
  return createRequestsFrom(agents, Date.UTC(year, 0, 1));
}

/** Every request books the next agent's next minute from `start` (epoch ms), round-robin; one every `stepMinutes` per agent. */
function createRequestsFrom(agents: Agent[], start: number, stepMinutes = 1) {
  return (n: number): HttpRequestSpec => {
    const agent = agents[n % agents.length]!;
    return {
      method: 'POST',
      path: '/api/bookings',
      headers: { 'content-type': 'application/json', ...bearer(agent) },
      body: bookingBody(agent, start + Math.floor(n / agents.length) * stepMinutes * MINUTE, 1),
    };
  };
}

/** S12: S1's creates for the agents with rules, a minute every S12_STEP_MINUTES (the buffers keep them apart). */
const ruledCreateRequests = (agents: Agent[], year: number) => createRequestsFrom(agents, Date.UTC(year, 0, 1), S12_STEP_MINUTES);

function checkAllCreated(scenario: string, target: TargetName, run: LoadRun, status = 201): void {
  const created = run.statuses[String(status)] ?? 0;
  if (created !== run.requests || run.errors) {
    problems.push(`${scenario} ${target} round ${run.round + 1}: ${created} of ${run.requests} answered ${status} (statuses ${JSON.stringify(run.statuses)}, ${run.errors} errors)`);
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
  // A booking of a's to cancel, and a proposal of b's for another booking of a's, for each target.
  const cancelAt = (target: Target) => Date.UTC(2141, 0, target.name === 'gateway' ? 1 : 2, 10);
  const proposedAt = (target: Target) => Date.UTC(2141, 0, target.name === 'gateway' ? 3 : 4, 10);
  const toCancel = new Map<TargetName, string>();
  const proposals = new Map<TargetName, string>();
  for (const target of targets) {
    const created = await postJson(target.base, '/api/bookings', JSON.parse(bookingBody(a, cancelAt(target), 30)) as unknown, a);
    if (created.status !== 201) throw new Error(`semantics: ${target.name} did not create the booking to cancel: ${created.status} ${JSON.stringify(created.body)}`);
    toCancel.set(target.name, String(created.body.id));
    proposals.set(target.name, (await seedProposals(db!, [{ proposer: b, target: a, startsAt: proposedAt(target), minutes: 30 }]))[0]!);
  }
  const bookingPath = (t: Target) => `${t.base}/api/bookings/${toCancel.get(t.name)}`;
  const acceptPath = (t: Target, id = proposals.get(t.name)) => `${t.base}/api/proposals/${id}/accept`;
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
    { name: "cancel another agent's booking", send: (t) => fetch(bookingPath(t), { method: 'DELETE', headers: bearer(b) }) },
    { name: 'cancel', send: (t) => fetch(bookingPath(t), { method: 'DELETE', headers: bearer(a) }) },
    { name: 'cancel again', send: (t) => fetch(bookingPath(t), { method: 'DELETE', headers: bearer(a) }) },
    { name: 'cancel an unknown booking', send: (t) => fetch(`${t.base}/api/bookings/${randomUUID()}`, { method: 'DELETE', headers: bearer(a) }) },
    { name: 'cancel a malformed id', send: (t) => fetch(`${t.base}/api/bookings/not-a-uuid`, { method: 'DELETE', headers: bearer(a) }) },
    { name: 'accept as the proposer', send: (t) => fetch(acceptPath(t), { method: 'PATCH', headers: bearer(b) }) },
    { name: 'accept', send: (t) => fetch(acceptPath(t), { method: 'PATCH', headers: bearer(a) }) },
    { name: 'accept again', send: (t) => fetch(acceptPath(t), { method: 'PATCH', headers: bearer(a) }) },
    { name: 'accept an unknown proposal', send: (t) => fetch(acceptPath(t, randomUUID()), { method: 'PATCH', headers: bearer(a) }) },
  ];
  const shape = async (response: Response) => {
    const text = await response.text();
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const detail = response.status === 400 ? Object.keys((body.errors as object | undefined) ?? {}).join(',') || String(body.error) : String(body.error ?? Object.keys(body).sort().join(','));
    return `${response.status} ${detail}`;
  };
  for (const check of cases) {
    const [gateway, reference] = [await shape(await check.send(targets[0]!)), await shape(await check.send(targets[1]!))];
    if (gateway !== reference) problems.push(`semantics, ${check.name}: gateway answers ${gateway}, reference ${reference}`);
  }
  // What the accepts did: the booking moved to the proposer, whole, on both.
  const { rows } = await db!.query<{ agent_id: string; slots_of: string }>(
    `select b.agent_id, (select string_agg(distinct s.agent_id::text, ',') from booking_slots s where s.booking_id = b.id) as slots_of
       from proposals p join bookings b on b.id = p.booking_id where p.id = any($1::uuid[])`,
    [[...proposals.values()]],
  );
  if (rows.length !== targets.length || rows.some((row) => row.agent_id !== b.id || row.slots_of !== b.id)) {
    problems.push(`semantics, accept: the accepted bookings are not the proposer's with their slots on both targets (${JSON.stringify(rows)})`);
  }
}

/**
 * Pending proposals as POST /api/proposals writes them, each for a booking of its target of exactly the
 * proposed range (written as create_booking writes it), so that accepting moves that booking. Answers their ids.
 */
async function seedProposals(pool: pg.Pool, wanted: { proposer: Agent; target: Agent; startsAt: number; minutes: number }[]): Promise<string[]> {
  const ids = wanted.map(() => randomUUID());
  await insertBookingsAsCreated(
    pool,
    `select gen_random_uuid() as id, agent_id, starts_at, starts_at + minutes * interval '1 minute' as ends_at
       from unnest($1::uuid[], $2::timestamptz[], $3::int[]) as w(agent_id, starts_at, minutes)`,
    [wanted.map((w) => w.target.id), wanted.map((w) => new Date(w.startsAt)), wanted.map((w) => w.minutes)],
  );
  await pool.query(
    `insert into proposals (id, proposer_agent_id, target_agent_id, starts_at, ends_at, status, created_at)
     select id, proposer, target, starts_at, starts_at + minutes * interval '1 minute', 'pending', now()
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::int[]) as w(id, proposer, target, starts_at, minutes)`,
    [ids, wanted.map((w) => w.proposer.id), wanted.map((w) => w.target.id), wanted.map((w) => new Date(w.startsAt)), wanted.map((w) => w.minutes)],
  );
  return ids;
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

/** An S5 run: S1's for its own agents, with what their webhooks and subscribers got. */
type S5Run = LoadRun & { events: number; deliveredDuring: number; expectedDeliveries: number; backlogAfter: number; drainedMs: number | null };

/** S5's agents with their webhooks (to a receiver in this process) and subscribers, ready for its runs in S1's rounds. */
interface S5Setting {
  /** What its subscribers' sockets and subscriptions reported wrong, every run's. */
  readonly errors: string[];
  /** Untimed creates for its agents, then their deliveries drained. */
  warmUp(): Promise<void>;
  /**
   * A timed run with its subscribers (opened before it, closed after); it returns once every delivery it queued
   * has arrived (bounded), so the next run starts from the same state.
   */
  run(round: number): Promise<S5Run>;
  closeSubscribers(): Promise<void>;
}

async function prepareS5(gateway: Target, agents: Agent[]): Promise<S5Setting> {
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
  // Each opening's list: its subscriptions report into it as long as they are open.
  const errorLists: string[][] = [];
  // Subscribed for each S5 run only: open, they cost the gateway something (keep-alives, the feeds' checks) in the runs beside.
  let clients: Client[] = [];
  const openSubscribers = async (): Promise<Subscriber[]> => {
    const opened = await subscribe(gateway, spread, S5_SUBSCRIBERS);
    clients = opened.clients;
    wsClients.push(...opened.clients);
    errorLists.push(opened.errors);
    await sleep(1000);
    return opened.subscribers;
  };
  const closeSubscribers = async () => {
    await Promise.all(clients.map((client) => Promise.resolve(client.dispose()).catch(() => undefined)));
    clients = [];
  };
  const drain = (from: number, expected: number) => waitFor(() => delivered - from >= expected, SECONDS * 3000);
  return {
    get errors() {
      return errorLists.flat();
    },
    async warmUp() {
      await openSubscribers();
      const before = delivered;
      const run = await warmUp(gateway, createRequests(agents, warmUpYear('gateway')));
      if (!(await drain(before, (run.statuses['201'] ?? 0) * S5_WEBHOOKS_PER_AGENT))) problems.push(`S5: the warm-up's deliveries did not arrive within ${SECONDS * 3} s`);
      await closeSubscribers();
    },
    async run(round) {
      const current = await openSubscribers();
      const deliveredBefore = delivered;
      // Counted when the load ends, before the statistics settle (delivery goes on meanwhile).
      let deliveredAtEnd = delivered;
      let endedAt = performance.now();
      const run = await load(gateway, round, createRequests(agents, s5Year(round)), {
        settle: true,
        afterRun: async () => {
          deliveredAtEnd = delivered;
          endedAt = performance.now();
        },
      });
      checkAllCreated('S5', 'gateway', run);
      const deliveredDuring = deliveredAtEnd - deliveredBefore;
      const expectedDeliveries = (run.statuses['201'] ?? 0) * S5_WEBHOOKS_PER_AGENT;
      // Timed from the load's end; the next run (S1's, or the reference's) starts after.
      const drained = await drain(deliveredBefore, expectedDeliveries);
      const drainedMs = drained ? Math.round(performance.now() - endedAt) : null;
      const events = current.reduce((sum, subscriber) => sum + subscriber.received, 0);
      await closeSubscribers();
      note(
        `S5 round ${round + 1}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}; ${events} subscriber events; webhooks ${deliveredDuring}/${expectedDeliveries} delivered during the run, ` +
          (drained ? `all within ${drainedMs} ms of the run's end` : `${expectedDeliveries - (delivered - deliveredBefore)} still queued ${SECONDS * 3} s after the statistics settled`),
      );
      return { ...run, events, deliveredDuring, expectedDeliveries, backlogAfter: expectedDeliveries - deliveredDuring, drainedMs };
    },
    closeSubscribers,
  };
}

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

/** S6's and S10's subscribers, in processes of their own (subscribers.ts); requests are answered in order. */
class SubscriberProcesses {
  private constructor(private readonly children: { child: ChildProcess; answers: { resolve: (message: FromSubscribers) => void; reject: (error: Error) => void }[] }[]) {}

  /** `sockets` are dealt to the processes in turn; `subscribeLater`: connect only, until `subscribe()`. */
  static async start(gateway: Target, sockets: SocketPlan[], processes: number, subscribeLater = false): Promise<SubscriberProcesses> {
    const children = Array.from({ length: Math.min(processes, sockets.length) }, () => {
      const child = fork(fileURLToPath(new URL('./subscribers.ts', import.meta.url)), { execArgv: process.execArgv, stdio: 'inherit' });
      const entry = { child, answers: [] as { resolve: (message: FromSubscribers) => void; reject: (error: Error) => void }[] };
      child.on('message', (message: FromSubscribers) => entry.answers.shift()?.resolve(message));
      child.on('exit', (code) => entry.answers.splice(0).forEach(({ reject }) => reject(new Error(`subscriber process exited (${code})`))));
      return entry;
    });
    const group = new SubscriberProcesses(children);
    await Promise.all(
      children.map((_, index) => {
        const start: StartSubscribers = {
          type: 'start',
          url: `${gateway.base.replace('http', 'ws')}/graphql`,
          sockets: sockets.filter((_, socket) => socket % children.length === index),
          query: BOOKING_EVENTS,
          subscribeLater,
        };
        return group.ask(index, start);
      }),
    );
    return group;
  }

  /** Sends every subscription, `perSecond` a second over all processes (0: at once). */
  async subscribe(perSecond: number): Promise<void> {
    await Promise.all(this.children.map((_, index) => this.ask(index, { type: 'subscribe', perSecond: perSecond / this.children.length })));
  }

  async status(): Promise<{ connected: number; subscriptions: number; live: number; fewest: number; errors: string[] }> {
    const answers = (await Promise.all(this.children.map((_, index) => this.ask(index, { type: 'status' })))) as SubscribersStatus[];
    return {
      connected: answers.reduce((sum, answer) => sum + answer.connected, 0),
      subscriptions: answers.reduce((sum, answer) => sum + answer.subscriptions, 0),
      live: answers.reduce((sum, answer) => sum + answer.live, 0),
      fewest: Math.min(...answers.map((answer) => answer.fewest)),
      errors: answers.flatMap((answer) => answer.errors),
    };
  }

  /** Every subscription's receipts since the last call (booking id → epoch ms) and its agent, and each event's createdAt. */
  async collect(): Promise<{ receipts: Map<string, number>[]; agents: string[]; createdAt: Map<string, number> }> {
    const answers = (await Promise.all(this.children.map((_, index) => this.ask(index, { type: 'collect' })))) as SubscribersReceipts[];
    return {
      receipts: answers.flatMap((answer) => answer.receipts.map((received) => new Map(Object.entries(received)))),
      agents: answers.flatMap((answer) => answer.agents),
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
// S9, S10 and W

/** S9: S1's load for agents with 10 live bookings and for agents with 10,000, per target. */
async function scenarioS9(targets: Target[], rootId: string): Promise<void> {
  const pool = db!;
  const started = performance.now();
  const groups = {
    few: await insertAgents(pool, S9_AGENTS, rootId, 'bench-s9-few-'),
    many: await insertAgents(pool, S9_AGENTS, rootId, 'bench-s9-many-'),
  };
  // 30-minute bookings two hours apart from S9_SEED_START; the large group in two halves at once (two cores).
  const calendars = (agents: Agent[], count: number) =>
    insertBookingsAsCreated(
      pool,
      `select gen_random_uuid() as id, a.id as agent_id, $2::timestamptz + i * interval '2 hours' as starts_at,
              $2::timestamptz + i * interval '2 hours' + interval '30 minutes' as ends_at
         from unnest($1::uuid[]) as a(id) cross join generate_series(0, $3 - 1) as i`,
      [agents.map((agent) => agent.id), S9_SEED_START, count],
    );
  const half = Math.ceil(S9_AGENTS / 2);
  await Promise.all([calendars(groups.few, S9_FEW), calendars(groups.many.slice(0, half), S9_MANY), calendars(groups.many.slice(half), S9_MANY)]);
  // Vacuumed, as autovacuum keeps a table in use: the visibility map set, so index-only scans are possible.
  await settleSeed(pool, 'bookings, booking_slots, booking_events', { vacuum: true });
  note(`S9: seeded ${S9_AGENTS} agents with ${S9_FEW} and ${S9_AGENTS} with ${S9_MANY.toLocaleString('en')} live bookings (+ slots, events) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const liveCounts = async () => {
    const counts: Record<'few' | 'many', { min: number; max: number }> = { few: { min: 0, max: 0 }, many: { min: 0, max: 0 } };
    for (const group of ['few', 'many'] as const) {
      const { rows } = await pool.query<{ min: number; max: number }>(
        `select min(n)::int as min, max(n)::int as max
           from (select (select count(*) from bookings b where b.agent_id = a.id and b.status = 'confirmed' and b.live_until > now()) as n
                   from unnest($1::uuid[]) as a(id)) c`,
        [groups[group].map((agent) => agent.id)],
      );
      counts[group] = rows[0]!;
    }
    return counts;
  };
  const before = await liveCounts();
  for (const target of targets) await warmUp(target, createRequestsFrom(groups.few, s9WarmUp(target.name)));
  const results = new Map(targets.map((target) => [target.name, { few: [] as LoadRun[], many: [] as LoadRun[] }]));
  for (let round = 0; round < ROUNDS; round++) {
    await alternate(round, targets, async (target) => {
      for (const group of round % 2 === 0 ? (['few', 'many'] as const) : (['many', 'few'] as const)) {
        const run = await load(target, round, createRequestsFrom(groups[group], s9Start(round, target.name, group)));
        checkAllCreated(`S9 ${group}`, target.name, run);
        results.get(target.name)![group].push(run);
        note(`S9 round ${round + 1} ${target.name}, agents with ${group === 'few' ? S9_FEW : S9_MANY} live bookings: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
      }
    });
  }
  const after = await liveCounts();
  const liveText = (counts: typeof before) => `${counts.few.min}–${counts.few.max} and ${counts.many.min}–${counts.many.max}`;
  console.log(`\n### S9 POST /api/bookings for ${S9_AGENTS} agents with ${S9_FEW} live bookings each vs ${S9_AGENTS} with ${S9_MANY.toLocaleString('en')} (live bookings per agent before the runs ${liveText(before)}, after ${liveText(after)})\n`);
  const rows: (string | number)[][] = [];
  const summaryOf: Record<string, unknown> = {};
  for (const target of targets) {
    const { few, many } = results.get(target.name)!;
    rows.push(loadRow(`${target.name}, ${S9_FEW} live`, summariseRuns(few)), loadRow(`${target.name}, ${S9_MANY.toLocaleString('en')} live`, summariseRuns(many)));
    summaryOf[target.name] = { few: summariseRuns(few), many: summariseRuns(many), ratio: ratios(many.map((r) => r.rps), few.map((r) => r.rps)) };
  }
  console.log(markdownTable(LOAD_HEADER, rows));
  const ratioText = (name: TargetName) => {
    const { few, many } = results.get(name)!;
    const rps = ratios(many.map((r) => r.rps), few.map((r) => r.rps));
    const cpu = (pick: (run: LoadRun) => number | null) =>
      many.every((r) => pick(r)) && few.every((r) => pick(r)) ? range(ratios(many.map((r) => pick(r)!), few.map((r) => pick(r)!)), 2) : 'n/a';
    return `req/s ${range(rps, 2)}, server CPU/req ${cpu((r) => r.cpuMs.server)}, PostgreSQL CPU/req ${cpu((r) => r.cpuMs.database)}`;
  };
  for (const target of targets) console.log(`\n${target.name}: ${S9_MANY.toLocaleString('en')} / ${S9_FEW} live bookings: ${ratioText(target.name)} (issue target: req/s within 10 %)`);
  report.S9 = { agentsPerGroup: S9_AGENTS, live: { before, after }, ...summaryOf, runs: Object.fromEntries(results) };
  compact.push([
    `S9 S1 at ${S9_FEW} vs ${S9_MANY.toLocaleString('en')} live bookings/agent (many/few)`,
    ratioText('gateway'),
    targets.length > 1 ? ratioText('reference') : 'n/a',
    'target: gateway req/s within 10 %',
  ]);
}

interface MemoryStage {
  stage: string;
  /** As found, and after two forced full collections. */
  raw: MemoryReading;
  collected: MemoryReading;
}

/** S10: 10,000 subscriptions on 1,000 sockets of 100 agents, 20 creates a second; latency, deliveries and the gateway's memory. */
async function scenarioS10(gateway: Target, agents: Agent[], inspectorPort: number | undefined): Promise<void> {
  const subscribed = agents.slice(0, S10_AGENTS);
  if (subscribed.length < S10_AGENTS) throw new Error(`S10 needs ${S10_AGENTS} agents, the bench has ${agents.length}`);
  const sockets = S10_AGENTS * S10_SOCKETS_PER_AGENT;
  const subscriptions = sockets * S10_SUBSCRIPTIONS_PER_SOCKET;
  const inspector = inspectorPort !== undefined && gateway.pid !== undefined ? await GatewayInspector.attach(gateway.pid, inspectorPort) : undefined;
  const memory: MemoryStage[] = [];
  const measure = async (stage: string) => {
    if (!inspector) return;
    const raw = await inspector.memory(false);
    memory.push({ stage, raw, collected: await inspector.memory(true) });
    if (S10_PROFILE_DIR && S10_HEAP_SNAPSHOTS) await inspector.heapSnapshot(join(S10_PROFILE_DIR, `s10-${memory.length}-${stage.replace(/\W+/g, '-')}.heapsnapshot`));
  };
  const profiled = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    if (!inspector || !S10_PROFILE_DIR) return run();
    if (S10_CPU_PROFILES) await inspector.startProfile();
    if (S10_ALLOCATION_SAMPLES) await inspector.startAllocationSampling(S10_ALLOCATION_SAMPLES);
    try {
      return await run();
    } finally {
      if (S10_CPU_PROFILES) await inspector.stopProfile(join(S10_PROFILE_DIR, `s10-${name}.cpuprofile`));
      if (S10_ALLOCATION_SAMPLES) await inspector.stopAllocationSampling(join(S10_PROFILE_DIR, `s10-${name}.heapprofile`));
    }
  };
  const errors: string[] = [];
  if (S10_PROFILE_DIR) await mkdir(S10_PROFILE_DIR, { recursive: true });
  try {
    await measure('idle, before the sockets');
    const plans = subscribed.flatMap((agent, a) =>
      Array.from({ length: S10_SOCKETS_PER_AGENT }, (_, k): SocketPlan => ({
        agentId: agent.id,
        connectionParams: bearer(agent),
        localAddress: S10_LOCAL_ADDRESSES[(a * S10_SOCKETS_PER_AGENT + k) % S10_LOCAL_ADDRESSES.length],
        subscriptions: S10_SUBSCRIPTIONS_PER_SOCKET,
      })),
    );
    const connectStarted = performance.now();
    const group = await SubscriberProcesses.start(gateway, plans, S6_PROCESSES, true);
    subscriberProcesses = group;
    let status = await group.status();
    errors.push(...status.errors);
    note(`S10: ${status.connected} of ${sockets} sockets acknowledged in ${((performance.now() - connectStarted) / 1000).toFixed(1)} s from ${S10_LOCAL_ADDRESSES.join(', ')}`);
    if (status.connected !== sockets) problems.push(`S10: only ${status.connected} of ${sockets} sockets were acknowledged (${errors[0] ?? 'no error reported'})`);
    const connectedSockets = status.connected;
    await measure(`${sockets} sockets, no subscription`);
    // The subscriptions open at BENCH_S10_SUBSCRIBE_PER_SECOND (0: all at once, as after a deploy when every
    // client reconnects); the gateway has taken them when /readyz (a database round trip) answers promptly again.
    const subscribeStarted = performance.now();
    const subscribeCpu = await readCpu(gateway.pid, clusterDir, probe?.backendPids);
    await sqlStatsOf('S10: the subscriptions opening', () => profiled('subscribing', async () => {
      await group.subscribe(S10_SUBSCRIBE_PER_SECOND);
      let prompt = 0;
      await waitFor(async () => {
        const asked = performance.now();
        const ok = await fetch(`${gateway.base}/readyz`).then((response) => response.ok, () => false);
        prompt = ok && performance.now() - asked < 50 ? prompt + 1 : 0;
        return prompt >= 3;
      }, 60_000);
    }));
    const takenMs = Math.round(performance.now() - subscribeStarted);
    const subscribeCpuMs = cpuMsPerRequest(subscribeCpu, await readCpu(gateway.pid, clusterDir, probe?.backendPids), subscriptions);
    note(
      `S10: ${subscriptions} subscribe messages sent ${S10_SUBSCRIBE_PER_SECOND ? `at ${S10_SUBSCRIBE_PER_SECOND} a second` : 'at once'}; ` +
        `the gateway answered /readyz promptly again ${takenMs} ms after the first; gateway CPU ${subscribeCpuMs.server ?? 'n/a'} ms, PostgreSQL CPU ${subscribeCpuMs.database ?? 'n/a'} ms per subscription`,
    );
    // One event per agent proves every subscription live (and is the last thing they see before the idle reading).
    // A few at a time; a 503 (no database connection within DB_CONNECT_TIMEOUT_MS) is retried, and counted.
    let unavailable = 0;
    let nextAgent = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let a = nextAgent++; a < subscribed.length; a = nextAgent++) {
          const agent = subscribed[a]!;
          for (let attempt = 1; ; attempt++) {
            const created = await postJson(gateway.base, '/api/bookings', JSON.parse(bookingBody(agent, Date.UTC(2119, 0, 1) + a * 60 * MINUTE, 30)) as unknown, agent);
            if (created.status === 201) break;
            if (created.status !== 503 || attempt >= 10) throw new Error(`S10 warm-up create: ${created.status} ${JSON.stringify(created.body)}`);
            unavailable++;
            await sleep(500);
          }
        }
      }),
    );
    if (unavailable) note(`S10: ${unavailable} warm-up creates were answered 503 and retried`);
    const live = await waitFor(async () => {
      status = await group.status();
      errors.push(...status.errors);
      return status.live === status.subscriptions && status.subscriptions === subscriptions;
    }, 60_000);
    note(`S10: ${status.subscriptions} subscriptions, ${status.live} live${live ? '' : ' (not all!)'}`);
    if (!live) problems.push(`S10: only ${status.live} of ${subscriptions} subscriptions received the warm-up event`);
    const liveSubscriptions = status.live;
    await group.collect();
    await measure(`${subscriptions} idle subscriptions`);

    const perRound: {
      round: number;
      p50: number | null;
      p99: number | null;
      createdP99: number;
      deliveries: number;
      expected: number;
      complete: number;
      events: number;
      createMs: number;
      drainMs: number;
      cpuMsPerEvent: { server: number | null; database: number | null };
      breakdown: { commitToAnswer: string; commitToFirstReceipt: string; firstToLastReceipt: string };
    }[] = [];
    const eventsPerAgent = S10_CREATES / S10_AGENTS;
    for (let round = 0; round < ROUNDS; round++) await profiled(`round-${round + 1}`, async () => {
      const tracked: { id: string; agentId: string; answeredAt: number }[] = [];
      const start = Date.UTC(s10Year(round), 0, 1);
      const cpuBefore = await readCpu(gateway.pid, clusterDir, probe?.backendPids);
      const started = performance.now();
      for (let i = 0; i < S10_CREATES; i++) {
        const wait = started + i * S6_INTERVAL_MS - performance.now();
        if (wait > 0) await sleep(wait);
        const agent = subscribed[i % S10_AGENTS]!;
        const created = await postJson(gateway.base, '/api/bookings', JSON.parse(bookingBody(agent, start + i * 60 * MINUTE, 30)) as unknown, agent);
        if (created.status !== 201) throw new Error(`S10 create: ${created.status} ${JSON.stringify(created.body)}`);
        tracked.push({ id: String(created.body.id), agentId: agent.id, answeredAt: performance.timeOrigin + performance.now() });
      }
      const createMs = Math.round(performance.now() - started);
      await waitFor(async () => {
        const progress = await group.status();
        errors.push(...progress.errors);
        return progress.fewest >= eventsPerAgent;
      }, 60_000);
      const drainMs = Math.round(performance.now() - started);
      // Everything the gateway did for an event: its create (HTTP, the write) and its delivery to 100 subscriptions.
      const cpuMsPerEvent = cpuMsPerRequest(cpuBefore, await readCpu(gateway.pid, clusterDir, probe?.backendPids), tracked.length);
      const collected = await group.collect();
      const { rows: commits } = await db!.query<{ id: string; committed: number | null }>(
        `select booking_id::text as id, extract(epoch from pg_xact_commit_timestamp(xmin)) * 1000 as committed
           from booking_events where booking_id = any($1::uuid[]) and type = 'booking.created'`,
        [tracked.map((event) => event.id)],
      );
      const committedAt = new Map(commits.filter((row) => row.committed !== null).map((row) => [row.id, Number(row.committed)]));
      const byCommit = committedAt.size === tracked.length;
      const sinceCommit: number[] = [];
      const sinceCreated: number[] = [];
      // Where an event's time goes: until the 201 reached the bench, until its first subscription had it, and the spread to its last.
      const toAnswer: number[] = [];
      const toFirst: number[] = [];
      const spread: number[] = [];
      let complete = 0;
      for (const event of tracked) {
        let all = true;
        let first = Infinity;
        let last = -Infinity;
        collected.receipts.forEach((receipts, index) => {
          if (collected.agents[index] !== event.agentId) return;
          const at = receipts.get(event.id);
          if (at === undefined) return void (all = false);
          if (byCommit) sinceCommit.push(at - committedAt.get(event.id)!);
          sinceCreated.push(at - collected.createdAt.get(event.id)!);
          first = Math.min(first, at);
          last = Math.max(last, at);
        });
        if (all) complete++;
        if (byCommit && first !== Infinity) {
          toAnswer.push(event.answeredAt - committedAt.get(event.id)!);
          toFirst.push(first - committedAt.get(event.id)!);
          spread.push(last - first);
        }
      }
      const p50p99 = (values: number[]) => (values.length ? `${round1(percentile(values, 50))} / ${round1(percentile(values, 99))}` : 'n/a');
      const breakdown = { commitToAnswer: p50p99(toAnswer), commitToFirstReceipt: p50p99(toFirst), firstToLastReceipt: p50p99(spread) };
      const result = {
        round,
        p50: byCommit ? round1(percentile(sinceCommit, 50)) : null,
        p99: byCommit ? round1(percentile(sinceCommit, 99)) : null,
        createdP99: round1(percentile(sinceCreated, 99)),
        deliveries: sinceCreated.length,
        expected: tracked.length * S10_SOCKETS_PER_AGENT * S10_SUBSCRIPTIONS_PER_SOCKET,
        complete,
        events: tracked.length,
        createMs,
        drainMs,
        cpuMsPerEvent,
        breakdown,
      };
      perRound.push(result);
      note(
        `S10 round ${round + 1}: ${result.deliveries} of ${result.expected} deliveries; commit → receipt p50 ${result.p50 ?? 'n/a'} ms, p99 ${result.p99 ?? 'n/a'} ms ` +
          `(createdAt → receipt p99 ${result.createdP99} ms); ${complete}/${tracked.length} events reached all their subscriptions; creates took ${createMs} ms, all delivered after ${drainMs} ms; ` +
          `CPU per event (its create and its deliveries): gateway ${cpuMsPerEvent.server ?? 'n/a'} ms, PostgreSQL ${cpuMsPerEvent.database ?? 'n/a'} ms; ` +
          `per event p50 / p99: commit → 201 at the bench ${breakdown.commitToAnswer} ms, commit → first receipt ${breakdown.commitToFirstReceipt} ms, first → last receipt ${breakdown.firstToLastReceipt} ms`,
      );
      if (complete !== tracked.length) problems.push(`S10 round ${round + 1}: ${tracked.length - complete} of ${tracked.length} events missed some of their agent's subscriptions (${result.deliveries} of ${result.expected} deliveries)`);
    });
    if (errors.length) problems.push(`S10: ${errors.length} subscription errors, first: ${errors[0]}`);
    await group.stop();
    subscriberProcesses = undefined;
    await sleep(1_000); // the gateway's close handlers
    await measure('sockets closed');

    const at = (stage: number) => memory[stage]?.collected;
    const perUnit = (from: number, to: number, units: number, field: keyof MemoryReading) =>
      at(from) && at(to) && units > 0 ? round1((at(to)![field] - at(from)![field]) / units / 1024) : null;
    // Per socket acknowledged and per subscription live (a failed one holds nothing).
    const memorySummary = {
      perSocketHeapKB: perUnit(0, 1, connectedSockets, 'heapUsed'),
      perSocketRssKB: perUnit(0, 1, connectedSockets, 'rss'),
      perSubscriptionHeapKB: perUnit(1, 2, liveSubscriptions, 'heapUsed'),
      perSubscriptionRssKB: perUnit(1, 2, liveSubscriptions, 'rss'),
    };
    console.log(`\n### S10 ${subscriptions.toLocaleString('en')} subscriptions on ${sockets.toLocaleString('en')} sockets of ${S10_AGENTS} agents, ${S10_CREATES} creates a round, one every ${S6_INTERVAL_MS} ms spread over the agents: commit → receipt\n`);
    console.log(
      markdownTable(
        ['round', 'deliveries', 'commit → receipt p50 / p99 ms', 'createdAt → receipt p99 ms', 'events to all their subscriptions', 'creates took ms', 'all delivered after ms', 'gateway / PostgreSQL CPU ms per event'],
        perRound.map((r) => [
          r.round + 1,
          `${r.deliveries}/${r.expected}`,
          r.p50 === null ? 'n/a' : `${r.p50} / ${r.p99}`,
          r.createdP99,
          `${r.complete}/${r.events}`,
          r.createMs,
          r.drainMs,
          `${r.cpuMsPerEvent.server ?? 'n/a'} / ${r.cpuMsPerEvent.database ?? 'n/a'}`,
        ]),
      ),
    );
    if (memory.length) {
      const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
      console.log(`\nThe gateway's memory (process.memoryUsage() through the inspector; MB as found → after two forced full GCs):\n`);
      console.log(
        markdownTable(
          ['stage', 'heap used', 'heap total', 'RSS', 'external + array buffers'],
          memory.map((m) => [
            m.stage,
            `${mb(m.raw.heapUsed)} → ${mb(m.collected.heapUsed)}`,
            `${mb(m.raw.heapTotal)} → ${mb(m.collected.heapTotal)}`,
            `${mb(m.raw.rss)} → ${mb(m.collected.rss)}`,
            `${mb(m.raw.external + m.raw.arrayBuffers)} → ${mb(m.collected.external + m.collected.arrayBuffers)}`,
          ]),
        ),
      );
      console.log(
        `\nper socket: ${memorySummary.perSocketHeapKB} KB heap, ${memorySummary.perSocketRssKB} KB RSS; per idle subscription: ${memorySummary.perSubscriptionHeapKB} KB heap, ` +
          `${memorySummary.perSubscriptionRssKB} KB RSS (after GC; issue target ≤ 8 KB heap per idle subscription)`,
      );
    }
    report.S10 = { agents: S10_AGENTS, sockets, subscriptions, creates: S10_CREATES, intervalMs: S6_INTERVAL_MS, subscribeTakenMs: takenMs, subscribeCpuMs, warmUp503: unavailable, rounds: perRound, memory, ...memorySummary, errors: errors.length };
    const p50 = summary(perRound.map((r) => r.p50 ?? Number.NaN));
    const p99 = summary(perRound.map((r) => r.p99 ?? Number.NaN));
    compact.push([
      `S10 ${subscriptions / 1000}k subscriptions, ${sockets} sockets, ${S10_AGENTS} agents, ${Math.round(1000 / Math.max(1, S6_INTERVAL_MS))} creates/s`,
      `commit → receipt p50 ${range(p50, 1)} ms, p99 ${range(p99, 1)} ms, ${perRound.every((r) => r.complete === r.events) ? 'all delivered' : 'MISSING deliveries'}; ` +
        `${memorySummary.perSubscriptionHeapKB ?? 'n/a'} KB heap per idle subscription, ${memorySummary.perSocketHeapKB ?? 'n/a'} KB per socket; ` +
        `gateway CPU ${perRound.map((r) => r.cpuMsPerEvent.server ?? 'n/a').join(', ')} ms per event, ${subscribeCpuMs.server ?? 'n/a'} ms per subscribe`,
      'n/a',
      'targets: p99 < 30 ms, ≤ 8 KB heap per idle subscription',
    ]);
  } finally {
    inspector?.close();
  }
}

interface StatementCost {
  toplevel: boolean;
  /** Per request. */
  calls: number;
  meanMs: number;
  /** WAL bytes per call (statements inside a function count their own; a commit record is the transaction's). */
  walBytesPerCall: number;
  query: string;
}

/** What pg_stat_statements saw of the bench's database since its reset, per request (`requests`). */
async function statementCosts(pool: pg.Pool, requests: number): Promise<StatementCost[]> {
  const { rows } = await pool.query<{ toplevel: boolean; calls: string; total_ms: number; wal_bytes: string; query: string }>(
    `select toplevel, calls, total_exec_time as total_ms, wal_bytes, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database()) and calls > 0 and query not like '%pg_stat_statements%'
      order by calls desc`,
  );
  return rows.map((row) => ({
    toplevel: row.toplevel,
    calls: Number(row.calls) / requests,
    meanMs: row.total_ms / Number(row.calls),
    walBytesPerCall: Number(row.wal_bytes) / Number(row.calls),
    query: row.query,
  }));
}

type WriteOp = 'create' | 'cancel' | 'accept';

/** One W run: its load figures and the statements PostgreSQL ran for it. */
type WriteRun = LoadRun & { statements: StatementCost[] };

/**
 * W: the write path per request, gateway vs reference: a create, a cancel of a booking written as
 * create_booking writes it, and the accept of a pending proposal whose target holds a booking of exactly
 * that range (the booking moves to the proposer). Each at BENCH_CONNECTIONS (BENCH_W_REQUESTS requests)
 * and one at a time (a quarter of them: no group commit merges two requests' flushes), with settled
 * statistics (flushes, transactions) and pg_stat_statements of each run alone.
 */
async function scenarioW(targets: Target[], agents: Agent[]): Promise<void> {
  const pool = db!;
  const levels = [
    { sequential: false, connections: CONNECTIONS, amount: W_REQUESTS },
    { sequential: true, connections: 1, amount: Math.max(1, Math.floor(W_REQUESTS / 4)) },
  ];
  // Every request has a row of its own, plus one per connection: autocannon may start a request per connection beyond `amount`.
  const rowsFor = (amount: number, connections: number) => amount + connections;
  // Each agent's rows are an hour apart (an accept's proposer gets the other half-hour, see below); a run takes whole days.
  const spanDays = Math.ceil((Math.ceil(rowsFor(W_REQUESTS, CONNECTIONS) / agents.length) * 60) / 1440);
  if (spanDays * wRunIndex(ROUNDS, true, 'reference') > 1_000) throw new Error('BENCH_W_REQUESTS is too large for the calendar years W books (three years per operation)');
  const runStart = (op: WriteOp, round: number, sequential: boolean, target: Target) =>
    W_REGIONS[op] + wRunIndex(round, sequential, target.name) * spanDays * 1440 * MINUTE;
  const slotOf = (n: number) => Math.floor(n / agents.length) * 60 * MINUTE;
  type Prepare = (target: Target, round: number, level: { sequential: boolean; connections: number; amount: number }) => Promise<(n: number) => HttpRequestSpec>;
  const ops: { op: WriteOp; title: string; status: number; prepare: Prepare }[] = [
    {
      op: 'create',
      title: 'POST /api/bookings',
      status: 201,
      prepare: async (target, round, level) => createRequestsFrom(agents, runStart('create', round, level.sequential, target)),
    },
    {
      op: 'cancel',
      title: 'DELETE /api/bookings/{id}',
      status: 204,
      prepare: async (target, round, level) => {
        const count = rowsFor(level.amount, level.connections);
        const ids = Array.from({ length: count }, () => randomUUID());
        const owner = (n: number) => agents[n % agents.length]!;
        const start = runStart('cancel', round, level.sequential, target);
        await insertBookingsAsCreated(
          pool,
          `select id, agent_id, starts_at, starts_at + interval '30 minutes' as ends_at
             from unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) as w(id, agent_id, starts_at)`,
          [ids, ids.map((_, n) => owner(n).id), ids.map((_, n) => new Date(start + slotOf(n)))],
        );
        return (n: number) => ({ method: 'DELETE', path: `/api/bookings/${ids[n % count]}`, headers: bearer(owner(n % count)) });
      },
    },
    {
      op: 'accept',
      title: 'PATCH /api/proposals/{id}/accept',
      status: 200,
      prepare: async (target, round, level) => {
        // Requests in flight together lock disjoint pairs of agents (n and n + half), as unrelated agents' accepts
        // would. An agent's own booking (as a target) is in the first half-hour of its hour when it is in the first
        // half of the agents, in the second otherwise, and the one it is given (as the proposer) in the other.
        const count = rowsFor(level.amount, level.connections);
        const half = Math.floor(agents.length / 2);
        const start = runStart('accept', round, level.sequential, target);
        const wanted = Array.from({ length: count }, (_, n) => ({
          target: agents[n % agents.length]!,
          proposer: agents[(n + half) % agents.length]!,
          startsAt: start + slotOf(n) + (n % agents.length < half ? 0 : 30 * MINUTE),
          minutes: 30,
        }));
        const ids = await seedProposals(pool, wanted);
        return (n: number) => ({ method: 'PATCH', path: `/api/proposals/${ids[n % count]}/accept`, headers: bearer(wanted[n % count]!.target) });
      },
    },
  ];

  // What the servers' background (job-queue polls, heartbeats, loops) costs with no requests at all, per second:
  // the settled counts of every write run include it for the run and the settling waits (statsWindowMs).
  {
    const mark = await probe!.begin(true);
    await pool.query('select pg_stat_statements_reset()');
    await sleep(SECONDS * 1000);
    const statements = await statementCosts(pool, SECONDS);
    const idle = await probe!.end(mark, SECONDS);
    const window = (idle.statsWindowMs ?? SECONDS * 1000) / 1000;
    const perWindow = (perRun: number | null) => (perRun === null ? 'n/a' : ((perRun * SECONDS) / window).toFixed(2));
    console.log(
      `\n### W: the database with no requests, per second: ${perRequest(idle.commits)} commits, ${(idle.walBytes / 1024).toFixed(1)} KB WAL (over ${SECONDS} s); ` +
        `${perWindow(idle.flushes)} WAL flushes, ${perWindow(idle.transactions)} transactions (over ${window.toFixed(1)} s with the settling waits)\n`,
    );
    console.log(markdownTable(['calls/s', 'level', 'mean ms', 'statement'], statements.slice(0, 8).map((st) => [st.calls.toFixed(2), st.toplevel ? 'top' : 'nested', st.meanMs.toFixed(3), st.query.slice(0, 140).replaceAll('|', '\\|')])));
    report.Widle = { perSecond: idle, statements: statements.slice(0, 20) };
  }
  // Untimed first: JIT, pools and plans warm (round -1 books days of its own), as S1 warms up.
  for (const { prepare } of ops) {
    for (const target of targets) {
      const level = { sequential: false, connections: CONNECTIONS, amount: Math.min(W_REQUESTS, 200) };
      await load(target, -1, await prepare(target, -1, level), { ...level, untimed: true });
    }
  }

  const results: Record<string, Record<string, WriteRun[]>> = {};
  for (const { op, title, status, prepare } of ops) {
    for (const level of levels) {
      const key = `${op}${level.sequential ? ', one at a time' : ''}`;
      const byTarget: Record<string, WriteRun[]> = Object.fromEntries(targets.map((target) => [target.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        await alternate(round, targets, async (target) => {
          const request = await prepare(target, round, level);
          let statements: StatementCost[] = [];
          const run = await load(target, round, request, {
            amount: level.amount,
            connections: level.connections,
            settle: true,
            beforeRun: async () => void (await pool.query('select pg_stat_statements_reset()')),
            afterRun: async () => void (statements = await statementCosts(pool, level.amount)),
          });
          checkAllCreated(`W ${key}`, target.name, run, status);
          byTarget[target.name]!.push({ ...run, statements });
          note(`W ${key} round ${round + 1} ${target.name}: ${run.requests} requests, ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
        });
      }
      results[key] = byTarget;
      printWriteRuns(`W ${key}: ${title}, ${level.amount} requests per run at ${level.connections} connection${level.connections === 1 ? '' : 's'}`, targets, byTarget);
      const gw = summariseRuns(byTarget.gateway!);
      const ref = byTarget.reference ? summariseRuns(byTarget.reference) : null;
      compact.push([
        `W ${key} (${title})`,
        `${range(gw.rps)} req/s, p99 ${gw.p99} ms${dbBrief(gw.db)}`,
        ref ? `${range(ref.rps)} req/s, p99 ${ref.p99} ms${dbBrief(ref.db)}` : 'n/a',
        ref ? range(ratios(byTarget.gateway!.map((r) => r.rps), byTarget.reference!.map((r) => r.rps)), 2) + cpuRatioText(byTarget.gateway!, byTarget.reference!) : 'n/a',
      ]);
    }
  }
  report.W = results;
}

/** W's tables for one operation and concurrency: the load figures, round trips and WAL, and each target's statements. */
function printWriteRuns(title: string, targets: Target[], byTarget: Record<string, WriteRun[]>): void {
  console.log(`\n### ${title}\n`);
  console.log(markdownTable(LOAD_HEADER, targets.map((target) => loadRow(target.name, summariseRuns(byTarget[target.name]!)))));
  // Round trips and where the WAL goes, from the first round (the statements are the same every round).
  const first = (name: TargetName) => byTarget[name]![0]!;
  console.log(
    '\n' +
      markdownTable(
        ['target', 'round trips/req (top-level statements)', 'of them NOTIFY', 'statements inside functions/req', 'WAL records/req', 'WAL KB/req (full-page images)', 'WAL by record type, per request (first round)'],
        targets.map((target) => {
          const run = first(target.name);
          const top = run.statements.filter((st) => st.toplevel);
          return [
            target.name,
            top.reduce((sum, st) => sum + st.calls, 0).toFixed(2),
            top.filter((st) => /pg_notify|^notify/i.test(st.query)).reduce((sum, st) => sum + st.calls, 0).toFixed(2),
            run.statements.filter((st) => !st.toplevel).reduce((sum, st) => sum + st.calls, 0).toFixed(2),
            perRequest(run.db?.walRecords, 1),
            run.db ? `${(run.db.walBytes / 1024).toFixed(1)} (${perRequest(run.db.fpiBytes === null ? null : run.db.fpiBytes / 1024, 1)})` : 'n/a',
            (run.db?.walByType ?? []).slice(0, 8).map((t) => `${t.type} ${t.count.toFixed(2)} × (${Math.round(t.bytes)} B)`).join(', ') || 'n/a',
          ];
        }),
      ),
  );
  for (const target of targets) {
    console.log(`\n${target.name}: statements per request (pg_stat_statements, first round; top-level ones are round trips)\n`);
    console.log(
      markdownTable(
        ['calls/req', 'level', 'mean ms', 'WAL B/call', 'statement'],
        first(target.name)
          .statements.filter((st) => st.calls >= 0.005)
          .slice(0, 14)
          .map((st) => [st.calls.toFixed(2), st.toplevel ? 'top' : 'nested', st.meanMs.toFixed(3), Math.round(st.walBytesPerCall), st.query.slice(0, 140).replaceAll('|', '\\|')]),
      ),
    );
  }
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
  db: DbSummary | null;
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
    db: summariseDb(loadRuns),
  };
}

interface DbSummary {
  /** Medians over the rounds, per request. */
  commits: number | null;
  flushes: number | null;
  transactions: number | null;
  walBytes: number;
  busyBackends: number;
  /** Each wait event's share averaged over the rounds, largest first. */
  waits: WaitShare[];
}

function summariseDb(loadRuns: LoadRun[]): DbSummary | null {
  const costs = loadRuns.flatMap((run) => (run.db ? [run.db] : []));
  if (!costs.length || costs.length !== loadRuns.length) return null;
  const shares = new Map<string, number>();
  for (const cost of costs) for (const { event, share } of cost.waits) shares.set(event, (shares.get(event) ?? 0) + share / costs.length);
  return {
    commits: medianOrNull(costs.map((cost) => cost.commits)),
    flushes: medianOrNull(costs.map((cost) => cost.flushes)),
    transactions: medianOrNull(costs.map((cost) => cost.transactions)),
    walBytes: Math.round(median(costs.map((cost) => cost.walBytes))),
    busyBackends: round1(median(costs.map((cost) => cost.busyBackends))),
    waits: [...shares].map(([event, share]) => ({ event, share })).sort((a, b) => b.share - a.share),
  };
}

const perRequest = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
const waitsText = (waits: WaitShare[], top = 3) => waits.slice(0, top).map(({ event, share }) => `${event} ${Math.round(share * 100)} %`).join(', ') || 'n/a';
const dbCells = (d: DbSummary | null): (string | number)[] =>
  d ? [perRequest(d.commits), perRequest(d.flushes), (d.walBytes / 1024).toFixed(1), perRequest(d.transactions), d.busyBackends, waitsText(d.waits)] : ['n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
/** One line of what a run cost the database, for the notes. */
const dbText = (d: DbCost | null) =>
  d
    ? `per request ${perRequest(d.commits)} commits, ${perRequest(d.flushes)} WAL flushes, ${(d.walBytes / 1024).toFixed(1)} KB WAL, ${perRequest(d.transactions)} transactions; ` +
      `${round1(d.busyBackends)} busy backends: ${waitsText(d.waits, 4)}`
    : 'no database figures';
/** The summary table's few words on the database side. */
const dbBrief = (d: DbSummary | null) => (d ? `; ${perRequest(d.commits)} commits, ${perRequest(d.flushes)} flushes, ${(d.walBytes / 1024).toFixed(1)} KB WAL per request` : '');

/** Median (min–max) of per-round ratios a[i] / b[i]. */
function ratios(a: number[], b: number[]): Summary {
  return summary(a.map((value, index) => value / b[index]!));
}

function markdownTable(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function loadRow(label: string, s: LoadSummary): (string | number)[] {
  return [label, range(s.rps), s.p50, s.p99, s.non2xx, s.errors, s.cpuMs.server ?? 'n/a', s.cpuMs.database ?? 'n/a', ...dbCells(s.db)];
}

/** Median (min–max) of the per-round ratios of PostgreSQL's CPU per request, a / b; null where unknown. */
function ratioOfDatabaseCpu(a: LoadRun[], b: LoadRun[]): Summary | null {
  const pairs = a.map((run, index) => [run.cpuMs.database, b[index]?.cpuMs.database] as const);
  if (!pairs.length || pairs.some(([ours, theirs]) => !ours || !theirs)) return null;
  return ratios(pairs.map(([ours]) => ours!), pairs.map(([, theirs]) => theirs!));
}

const cpuText = (run: LoadRun) => `CPU per request: server ${run.cpuMs.server ?? '?'} ms, PostgreSQL ${run.cpuMs.database ?? '?'} ms; ${dbText(run.db)}`;

/**
 * Median (min–max) of the per-round ratios of server CPU per request, gateway / reference: steadier than req/s
 * on a shared machine (a busy neighbour slows both targets' clocks, not the work a request takes).
 */
function cpuRatioText(gateway: LoadRun[], reference: LoadRun[]): string {
  const pairs = gateway.map((run, index) => [run.cpuMs.server, reference[index]?.cpuMs.server] as const);
  if (!pairs.length || pairs.some(([ours, theirs]) => !ours || !theirs)) return '';
  return `; server CPU per request ${range(ratios(pairs.map(([ours]) => ours!), pairs.map(([, theirs]) => theirs!)), 2)}`;
}

const LOAD_HEADER = [
  'target', 'req/s median (min–max)', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'server CPU ms/req', 'PostgreSQL CPU ms/req',
  'commits/req', 'WAL flushes/req', 'WAL KB/req', 'transactions/req', 'busy backends', 'waits (share of busy samples)',
];

// ---------------------------------------------------------------------------------------------------
// Main

/** The pass being run: its figures (the JSON line) and its summary rows. */
let report: Record<string, unknown> = {};
const compact: (string | number)[][] = [];
let probe: DbProbe | undefined;
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
  await probe?.close().catch(() => undefined);
  probe = undefined;
  await db?.end().catch(() => undefined);
  db = undefined;
  for (const { name, child } of children.splice(0).reverse()) await stopChild(name, child).catch((error: unknown) => console.error(error));
  await replica?.destroy().catch((error: unknown) => console.error('removing the S9 replica failed', error));
  replica = undefined;
  await database?.stop().catch((error: unknown) => console.error('stopping PostgreSQL failed', error));
  database = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
  clusterDir = undefined;
  receiver = undefined;
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
  const external = Boolean(process.env.DATABASE_URL);
  const passes: (Durability | 'external')[] = external ? ['external'] : DURABILITIES;
  console.log(
    `bench: ${[...SELECTED].join(',')}; ${ROUNDS} round(s), ${SECONDS} s per run, ${CONNECTIONS} connections${SMOKE ? ' (smoke)' : ''}; ` +
      `PostgreSQL ${external ? 'from DATABASE_URL' : passes.join(', then ')}`,
  );
  const summaries: { title: string; rows: (string | number)[][] }[] = [];
  const reports: Record<string, unknown> = {};
  for (const pass of passes) {
    const problemsBefore = problems.length;
    compact.length = 0;
    report = {};
    try {
      const settings = await runPass(pass);
      summaries.push({ title: settings, rows: [...compact] });
      reports[pass] = { settings, ...report };
    } finally {
      await cleanup();
      stopping = false;
      if (passes.length > 1) problems.splice(problemsBefore, Infinity, ...problems.slice(problemsBefore).map((problem) => `[${pass}] ${problem}`));
    }
  }

  for (const { title, rows } of summaries) {
    console.log(`\n## Summary: ${title} (${ROUNDS} round(s) × ${SECONDS} s, ${CONNECTIONS} connections, ${AGENTS} agents${SMOKE ? ', smoke' : ''})\n`);
    console.log(markdownTable(['scenario', 'gateway', 'reference', 'gateway/reference'], rows));
  }
  console.log('\nRatios are medians of per-round ratios (min–max). A req/s ratio below 1, or a latency, wall-time or CPU-per-request ratio above 1, means the gateway is slower.');
  console.log('Commits are commit records in the run\'s WAL (transactions that wrote), flushes the WAL fsyncs of all PostgreSQL processes, both per request.');
  if (problems.length) {
    console.log('\nRules broken:');
    for (const problem of problems) console.log(`  - ${problem}`);
  }
  console.log(`\nbench took ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`);
  console.log(JSON.stringify({ settings: { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, agents: AGENTS, smoke: SMOKE, scenarios: [...SELECTED] }, ...reports, problems }));
}

/** PostgreSQL's durability settings as the server has them. */
async function durabilitySettings(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ name: string; setting: string }>(
    `select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes') order by name`,
  );
  return rows.map((row) => `${row.name}=${row.setting}`).join(', ');
}

/** One pass of the bench on a cluster of its own (or DATABASE_URL's); answers the title of its summary. */
async function runPass(pass: Durability | 'external'): Promise<string> {
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
    database = await startEmbeddedPostgres({
      dataDir,
      logger: createLogger('warn'),
      ephemeral: pass === 'cpu',
      statementStats: SQL_STATS || runs('W'),
      commitTimestamps: true,
    });
    clusterDir = join(dataDir, 'pg');
    handleSignals();
    databaseUrl = database.url;
  }
  const common = { DATABASE_URL: databaseUrl, BOOKING_CAP: '100000000', LOG_LEVEL: 'warn' };
  // The gateway runs the migrations before it listens; the reference starts after, on the same tables.
  // BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/profiles" profiles the gateway (written when it stops).
  const gatewayNodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // S10 reads the gateway's memory through its inspector, which this only gives a port: it opens on SIGUSR1 (inspector.ts).
  const inspectorPort = runs('S10') ? await freePort() : undefined;
  const gateway = await startChild('gateway', [...gatewayNodeArgs, ...(inspectorPort ? [`--inspect-port=127.0.0.1:${inspectorPort}`] : []), 'dist/src/main.js'], {
    ...common,
    NODE_ENV: 'production', // as `npm start` runs it
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_ANON_PER_MIN: '1000000000',
    RATE_LIMIT_AUTH_PER_MIN: '1000000000',
    AGENT_CREATE_PER_MIN: String(FAN_OUT_BOUND),
    AGENT_FAMILY_MAX: String(FAN_OUT_BOUND),
    PENDING_PROPOSALS_MAX: String(FAN_OUT_BOUND),
    PRICE_PROVIDERS: '', // no price polling: all traffic stays on 127.0.0.1
    GRAPHQL_EXPLORER: 'false',
  });
  // BENCH_REFERENCE_NODE_ARGS does the same for the reference server (its profile beside the gateway's).
  const referenceNodeArgs = (process.env.BENCH_REFERENCE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const reference = await startChild('reference', [...referenceNodeArgs, '--import', '@swc-node/register/esm-register', 'bench/reference/server.ts'], common);
  const targets: Target[] = [
    { name: 'gateway', base: gateway.base, pid: gateway.pid },
    { name: 'reference', base: reference.base, pid: reference.pid },
  ];

  // The seed writes agents straight into the table; like the gateway, it hands the agents' trigger its
  // own family bound (without one the contract's 10,000 holds, which a shared DATABASE_URL passes after a few runs).
  db = new pg.Pool({ connectionString: databaseUrl, max: 4, application_name: 'bench', options: `-c ${LIMIT_SETTINGS.agentFamilyMax.name}=${FAN_OUT_BOUND}` });
  const settings = await durabilitySettings(db);
  const title = pass === 'external' ? `PostgreSQL from DATABASE_URL (${settings})` : `${pass === 'durable' ? 'durable' : 'CPU only'} (${settings})`;
  note(`gateway ${gateway.base}, reference ${reference.base}, PostgreSQL ${database ? 'embedded' : 'from DATABASE_URL'}: ${settings}`);
  probe = await DbProbe.open(databaseUrl, { settleMs: STATS_SETTLE_MS, sampleMs: WAIT_SAMPLE_MS });
  const { rootId, agents, flat, history, availability, ruled, ruledAvailability, notified } = await seed(db);
  await checkSameSemantics(targets, agents);
  if (SQL_STATS || runs('W')) await db.query('create extension if not exists pg_stat_statements');

  // ---- S1, and S12 and S5 in the same rounds: their ratios are to the gateway's S1 of their round
  const s1 = new Map<TargetName, LoadRun[]>([['gateway', []], ['reference', []]]);
  const s12: LoadRun[] = [];
  const s5: S5Run[] = [];
  let s5Setting: S5Setting | undefined;
  if (runs('S1') || runs('S5') || runs('S12')) {
    const s1Targets = runs('S1') ? targets : [targets[0]!]; // S5 or S12 alone still needs the gateway's S1
    if (runs('S5')) s5Setting = await prepareS5(gateway, notified);
    type Job = { target: Target; scenario: 'S1' | 'S12' | 'S5' };
    const jobs: Job[] = [
      ...s1Targets.map((target): Job => ({ target, scenario: 'S1' })),
      ...(runs('S12') ? [{ target: gateway, scenario: 'S12' } as Job] : []),
      ...(s5Setting ? [{ target: gateway, scenario: 'S5' } as Job] : []),
    ];
    for (const target of s1Targets) await warmUp(target, createRequests(agents, warmUpYear(target.name)));
    if (runs('S12')) await warmUp(gateway, ruledCreateRequests(ruled, warmUpYear('gateway')));
    if (s5Setting) await s5Setting.warmUp();
    for (let round = 0; round < ROUNDS; round++) {
      const label = `S1${runs('S12') ? ', S12' : ''}${s5Setting ? ', S5' : ''} round 1`;
      const results = await sqlStatsOf(round === 0 ? label : undefined, async () =>
        inTurn(round, jobs, ({ target, scenario }): Promise<LoadRun> => {
          if (scenario === 'S5') return s5Setting!.run(round);
          const requests = scenario === 'S12' ? ruledCreateRequests(ruled, s1Year(round, target.name)) : createRequests(agents, s1Year(round, target.name));
          return load(target, round, requests, { settle: true });
        }),
      );
      for (const [{ target, scenario }, run] of results) {
        if (scenario === 'S5') {
          s5.push(run as S5Run);
          continue; // noted by the run itself
        }
        if (scenario === 'S12') s12.push(run);
        else s1.get(target.name)!.push(run);
        checkAllCreated(scenario, target.name, run);
        note(`${scenario} round ${round + 1} ${target.name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}, statuses ${JSON.stringify(run.statuses)}`);
      }
    }
    // Closed after each run already; again in case a run failed midway (S10 counts memory per socket).
    await s5Setting?.closeSubscribers();
  }
  if (runs('S12')) {
    // Rounds in the order they ran, as s1's are.
    s12.sort((a, b) => a.round - b.round);
    const gw = summariseRuns(s12);
    const base = summariseRuns(s1.get('gateway')!);
    const ratio = ratios(s12.map((run) => run.rps), s1.get('gateway')!.map((run) => run.rps));
    const databaseCpu = ratioOfDatabaseCpu(s12, s1.get('gateway')!);
    report.S12 = { rules: S12_RULES, stepMinutes: S12_STEP_MINUTES, gateway: gw, gatewayS1: base, ratio, databaseCpuRatio: databaseCpu, runs: s12 };
    console.log(`\n### S12 POST /api/bookings for ${ruled.length} agents with rules (hours, buffers, daily limit, enforced on their own creates) vs the gateway's S1\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway, agents with rules', gw), loadRow('gateway, S1 (no rules)', base)]));
    console.log(`\nS12/S1 req/s (gateway, same round): ${range(ratio, 2)} (target ≥ 0.85)${databaseCpu ? `; PostgreSQL CPU per request ${range(databaseCpu, 2)}` : ''}`);
    compact.push([
      'S12 create, agent with rules',
      `${range(gw.rps)} req/s, p99 ${gw.p99} ms${dbBrief(gw.db)}`,
      'n/a',
      `${range(ratio, 2)} (vs gateway S1, target ≥ 0.85)${cpuRatioText(s12, s1.get('gateway')!)}`,
    ]);
  }
  if (runs('S1')) {
    const gw = summariseRuns(s1.get('gateway')!);
    const ref = summariseRuns(s1.get('reference')!);
    const ratio = ratios(s1.get('gateway')!.map((run) => run.rps), s1.get('reference')!.map((run) => run.rps));
    report.S1 = { gateway: gw, reference: ref, ratio, runs: Object.fromEntries(s1) };
    console.log(`\n### S1 POST /api/bookings (fresh 1-minute slot per request, ${agents.length} agents round-robin)\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway', gw), loadRow('reference', ref)]));
    console.log(`\ngateway/reference req/s: ${range(ratio, 2)}`);
    compact.push([
      'S1 create booking',
      `${range(gw.rps)} req/s, p99 ${gw.p99} ms${dbBrief(gw.db)}`,
      `${range(ref.rps)} req/s, p99 ${ref.p99} ms${dbBrief(ref.db)}`,
      range(ratio, 2) + cpuRatioText(s1.get('gateway')!, s1.get('reference')!),
    ]);
  }

  if (s5Setting) {
    const { errors } = s5Setting;
    if (errors.length) problems.push(`S5: ${errors.length} subscription errors, first: ${errors[0]}`);
    // Rounds in the order they ran, as s1's are.
    s5.sort((a, b) => a.round - b.round);
    const gw = summariseRuns(s5);
    const base = summariseRuns(s1.get('gateway')!);
    const ratio = ratios(s5.map((run) => run.rps), s1.get('gateway')!.map((run) => run.rps));
    report.S5 = { webhooks: notified.length * S5_WEBHOOKS_PER_AGENT, subscribers: S5_SUBSCRIBERS, gateway: gw, gatewayS1: base, ratio, runs: s5 };
    console.log(`\n### S5 POST /api/bookings with ${notified.length * S5_WEBHOOKS_PER_AGENT} webhooks and ${S5_SUBSCRIBERS} subscribers (gateway) vs the gateway's S1 of the same round\n`);
    console.log(markdownTable(LOAD_HEADER, [loadRow('gateway, webhooks + subscribers', gw), loadRow('gateway, S1 (none)', base)]));
    console.log(
      '\n' +
        markdownTable(
          ['round', 'created', 'subscriber events', 'webhooks delivered during run', 'expected', 'all delivered, ms after the run'],
          s5.map((r) => [r.round + 1, r.statuses['201'] ?? 0, r.events, r.deliveredDuring, r.expectedDeliveries, r.drainedMs ?? `not within ${SECONDS * 3} s`]),
        ),
    );
    console.log(`\nS5/S1 req/s (gateway, same round): ${range(ratio, 2)} (target ≥ 0.7)`);
    compact.push([
      `S5 create with ${S5_WEBHOOKS_PER_AGENT} webhooks/agent + ${S5_SUBSCRIBERS} subs`,
      `${range(gw.rps)} req/s, p99 ${gw.p99} ms${dbBrief(gw.db)}`,
      'n/a',
      `${range(ratio, 2)} (vs gateway S1, same round)${cpuRatioText(s5, s1.get('gateway')!)}`,
    ]);
  }

  // ---- S2 and S3
  // S3's rounds take turns with S2's, so each is paired with the reference's S2 of its own round (run
  // after every S2 round, S3 met a machine minutes older than the reference's rounds it was divided by).
  const s2 = new Map<TargetName, LoadRun[]>([['gateway', []], ['reference', []]]);
  const s3: LoadRun[] = [];
  if (runs('S2') || runs('S3')) {
    await assertListOf50(runs('S2') ? targets : [targets[1]!], agents[0]!);
    if (runs('S3')) await assertGraphqlOf50(gateway, agents[0]!);
    const s2Targets = runs('S2') ? targets : [targets[1]!]; // S3 alone still needs the reference's S2
    const jobs: { target: Target; graphql: boolean }[] = [...s2Targets.map((target) => ({ target, graphql: false })), ...(runs('S3') ? [{ target: gateway, graphql: true }] : [])];
    for (const { target, graphql } of jobs) await warmUp(target, graphql ? graphqlRequests(agents) : listRequests(agents));
    for (let round = 0; round < ROUNDS; round++) {
      const results = await inTurn(round, jobs, ({ target, graphql }) =>
        sqlStatsOf(round === 0 ? (graphql ? 'S3 round 1' : `S2 round 1, ${target.name}`) : undefined, () => load(target, round, graphql ? graphqlRequests(agents) : listRequests(agents))),
      );
      for (const [{ target, graphql }, run] of results) {
        const label = graphql ? `S3 round ${round + 1} gateway GraphQL` : `S2 round ${round + 1} ${target.name}`;
        if (graphql) s3.push(run);
        else s2.get(target.name)!.push(run);
        if (run.non2xx || run.errors) problems.push(`${label}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        note(`${label}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
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

  // ---- S9 and W (before S6, like S7: no subscribers; S5's deliveries have drained)
  if (runs('S9')) await scenarioS9(targets, rootId);
  if (runs('W')) await scenarioW(targets, agents);

  // ---- S7 (before S6: no subscribers; S5's deliveries have drained and its sockets closed)
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

  // ---- S8 (before S6, like S7), and S13 in the same rounds (its ratio is to the gateway's S8 of its round)
  if (runs('S8') || runs('S13')) {
    const s8Targets = runs('S8') ? targets : [targets[0]!]; // S13 alone still needs the gateway's S8
    const slots = await assertSameAvailability(s8Targets, availability);
    note(`S8: ${availability.length} agents, ${S8_BOOKINGS_PER_AGENT} bookings each in ${S8_FROM.slice(0, 10)} – ${S8_TO.slice(0, 10)}; a request answers ${slots} slots`);
    const ruledSlots = runs('S13') ? await assertSameAvailability([targets[0]!], ruledAvailability) : 0;
    if (runs('S13')) note(`S13: ${ruledAvailability.length} agents with rules, ${S8_BOOKINGS_PER_AGENT} bookings each in the same window; a request answers ${ruledSlots} slots`);
    const jobs: { target: Target; ruled: boolean }[] = [...s8Targets.map((target) => ({ target, ruled: false })), ...(runs('S13') ? [{ target: targets[0]!, ruled: true }] : [])];
    const calendars = (job: { ruled: boolean }) => (job.ruled ? ruledAvailability : availability);
    const scenarioOf = (job: { ruled: boolean }) => (job.ruled ? 'S13' : 'S8');
    for (const job of jobs) await warmUp(job.target, availabilityRequests(calendars(job)));
    const s8 = new Map<TargetName, LoadRun[]>([['gateway', []], ['reference', []]]);
    const s13: LoadRun[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results = await inTurn(round, jobs, (job) => load(job.target, round, availabilityRequests(calendars(job))));
      for (const [job, run] of [...results].sort(([a], [b]) => jobs.indexOf(a) - jobs.indexOf(b))) {
        const name = job.target.name;
        if (job.ruled) s13.push(run);
        else s8.get(name)!.push(run);
        if (run.non2xx || run.errors) problems.push(`${scenarioOf(job)} ${name} round ${round + 1}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        note(`${scenarioOf(job)} round ${round + 1} ${name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)}`);
      }
    }
    // Latency of one request at a time (under load, p50 is mostly waiting for the two cores).
    const sequential = new Map<TargetName, { p50: number; p99: number; requests: number }[]>([['gateway', []], ['reference', []]]);
    const ruledSequential: { p50: number; p99: number; requests: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results = await inTurn(round, jobs, (job) => sequentialAvailability(job.target, calendars(job)));
      for (const [job, result] of results) {
        if (job.ruled) ruledSequential.push(result);
        else sequential.get(job.target.name)!.push(result);
        note(`${scenarioOf(job)} round ${round + 1} ${job.target.name}, sequential: p50 ${result.p50} ms, p99 ${result.p99} ms (${result.requests} requests)`);
      }
    }
    const unloadedOf = (results: { p50: number; p99: number }[]) => ({ p50: round2(median(results.map((r) => r.p50))), p99: round2(median(results.map((r) => r.p99))) });
    const unloaded = (name: TargetName) => unloadedOf(sequential.get(name)!);
    if (runs('S8')) {
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
    if (runs('S13')) {
      const gw = summariseRuns(s13);
      const base = summariseRuns(s8.get('gateway')!);
      const ratio = ratios(s13.map((run) => run.rps), s8.get('gateway')!.map((run) => run.rps));
      const databaseCpu = ratioOfDatabaseCpu(s13, s8.get('gateway')!);
      const alone = unloadedOf(ruledSequential);
      const latencyRatio = ratios(ruledSequential.map((r) => r.p50), sequential.get('gateway')!.map((r) => r.p50));
      report.S13 = {
        rules: S13_RULES,
        slotsPerAnswer: ruledSlots,
        gateway: gw,
        gatewayS8: base,
        ratio,
        databaseCpuRatio: databaseCpu,
        sequential: { gateway: alone, gatewayS8: unloaded('gateway'), p50Ratio: latencyRatio },
        runs: s13,
      };
      console.log(`\n### S13 GET /api/availability, ${ruledAvailability.length} agents with rules (hours, buffers, daily and weekly limits) × ${S8_BOOKINGS_PER_AGENT} bookings, vs the gateway's S8\n`);
      console.log(markdownTable(LOAD_HEADER, [loadRow('gateway, agents with rules', gw), loadRow('gateway, S8 (no rules)', base)]));
      console.log(`\nsequential (one connection): with rules p50 ${alone.p50} ms, p99 ${alone.p99} ms; S8 p50 ${unloaded('gateway').p50} ms (p50 ratio ${range(latencyRatio, 2)})`);
      console.log(`\nS13/S8 req/s (gateway, same round): ${range(ratio, 2)} (target ≥ 0.8)${databaseCpu ? `; PostgreSQL CPU per request ${range(databaseCpu, 2)}` : ''}`);
      compact.push([
        `S13 availability, ${ruledAvailability.length} agents with rules`,
        `${range(gw.rps)} req/s, p50 ${gw.p50}, p99 ${gw.p99} ms; alone p50 ${alone.p50} ms`,
        'n/a',
        `${range(ratio, 2)} (vs gateway S8, target ≥ 0.8)${cpuRatioText(s13, s8.get('gateway')!)}`,
      ]);
    }
  }

  // ---- S6
  if (runs('S6')) {
    const agent = agents[0]!;
    const plans = Array.from({ length: S6_SOCKETS }, (): SocketPlan => ({ agentId: agent.id, connectionParams: bearer(agent), subscriptions: S6_SUBSCRIBERS / S6_SOCKETS }));
    const group = await SubscriberProcesses.start(gateway, plans, S6_PROCESSES);
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

  // ---- S10 (after S6: its sockets and subscriptions are gone, as S5's are)
  if (runs('S10')) await scenarioS10(targets[0]!, agents, inspectorPort);

  if (runs('S11')) await replicaReads(databaseUrl, agents, targets[0]!);

  return title;
}

// ---------------------------------------------------------------------------------------------------
// S11: S2 from a streaming replica

/** The S11 standby (removed by cleanup). */
let replica: StreamingReplica | undefined;
const S11_METRICS_TOKEN = 'bench-s9-metrics-token-0123456789';

/**
 * S11: the S2 requests against a gateway reading from a standby of the bench's cluster, alternating round
 * by round with the gateway that reads from the primary. The agents wrote in S1 (their tokens are
 * remembered): each list costs the primary one lookup of the caller's floor and the replica the list.
 */
async function replicaReads(databaseUrl: string, agents: Agent[], primaryGateway: Target): Promise<void> {
  if (!clusterDir || !db) {
    problems.push('S11 needs the embedded cluster (unset DATABASE_URL)');
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
    METRICS_TOKEN: S11_METRICS_TOKEN,
  });
  const serving = async () => {
    const report = (await (await fetch(`${withReplica.base}/api/status`)).json()) as { services: { database: { replicas: { status: string; lag_ms: number }[] } } };
    return report.services.database.replicas[0];
  };
  if (!(await waitFor(async () => (await serving())?.status === 'operational', 30_000))) throw new Error(`S11: the replica does not serve reads: ${JSON.stringify(await serving())}`);
  const targets: Target[] = [primaryGateway, { name: 'gateway-replica', base: withReplica.base, pid: withReplica.pid }];
  note(`S11: standby on port ${replica.port} (${durable ? 'fsync on' : 'fsync off'}, as the primary), gateway-replica ${withReplica.base}`);
  const runs9 = new Map<TargetName, (LoadRun & { replicaCpuMs: number | null })[]>([['gateway', []], ['gateway-replica', []]]);
  const timed = async (target: Target, round: number, seconds = SECONDS) => {
    const before = await readCpu(undefined, replica!.dataDir);
    const run = await load(target, round, listRequests(agents), { seconds });
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
      if (run.non2xx || run.errors) problems.push(`S11 ${name} round ${round + 1}: ${run.non2xx} non-2xx, ${run.errors} errors`);
      note(`S11 round ${round + 1} ${name}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${cpuText(run)} (primary), standby ${run.replicaCpuMs ?? '?'} ms`);
    }
  }
  const routes = await replicaRoutes(withReplica.base);
  const fromReplica = (routes.get('replica') ?? 0) - (routesBefore.get('replica') ?? 0);
  const all = [...routes].reduce((sum, [route, n]) => sum + n - (routesBefore.get(route) ?? 0), 0);
  if (all === 0 || fromReplica / all < 0.99) problems.push(`S11: the standby served ${fromReplica} of ${all} lists (routes ${JSON.stringify(Object.fromEntries(routes))})`);
  const lag = await serving();
  const primaryRuns = runs9.get('gateway')!;
  const replicaRuns = runs9.get('gateway-replica')!;
  const gw = summariseRuns(primaryRuns);
  const rep = summariseRuns(replicaRuns);
  const standbyCpu = (runs: (LoadRun & { replicaCpuMs: number | null })[]) => medianOrNull(runs.map((run) => run.replicaCpuMs)) ?? 'n/a';
  const ratio = ratios(replicaRuns.map((run) => run.rps), primaryRuns.map((run) => run.rps));
  report.S11 = { primary: gw, replica: rep, ratio, standbyCpuMs: { primary: standbyCpu(primaryRuns), replica: standbyCpu(replicaRuns) }, servedByStandby: fromReplica, lists: all, lagMs: lag?.lag_ms ?? null };
  console.log(`
### S11 S2 from a streaming replica beside S2 from the primary (${durable ? 'durable' : 'fsync off'})
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
  compact.push(['S11 S2 from a replica (vs S2 from the primary)', `${range(rep.rps)} req/s, p99 ${rep.p99} ms; primary PostgreSQL ${rep.cpuMs.database ?? '?'} ms/req`, `(primary) ${range(gw.rps)} req/s; ${gw.cpuMs.database ?? '?'} ms/req`, `${range(ratio, 2)} (replica/primary)`]);
}

/** A gateway's gateway_db_replica_reads_total by route. */
async function replicaRoutes(base: string): Promise<Map<string, number>> {
  const exposition = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${S11_METRICS_TOKEN}` } })).text();
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
