/**
 * What the availability statement costs PostgreSQL for agents with rules (bench S13) against the same agents without
 * (S8), the statement alone on one connection, so that the ratio holds on a busy machine: the two shapes alternate in
 * blocks inside one run, and each block's ratio is taken before the median. Figures per statement:
 *
 *   - wall time (round trip on loopback) and the backend's CPU (`/proc/<pid>/stat`, user + system) per call;
 *   - the statement's plan for one S13 call (`EXPLAIN (ANALYZE, BUFFERS)` of the generic plan the gateway runs);
 *   - pg_stat_statements (planning tracked) and pg_stat_user_functions for the functions PostgreSQL does not inline;
 *   - a digest of every caller's answer, so that two versions of the SQL can be shown to answer the same.
 *
 * The data is the bench's (test/bench/run.ts, S8 and S13): ten agents each, 500 bookings in a 30-day window, S13's
 * with working hours (Mon–Fri 07:00–12:00 and 13:00–20:00, Sat 09:00–13:00, Europe/Berlin), a 5-minute buffer after,
 * limits of 18 a day and 150 a week; and, around them, FILLER_AGENTS agents with 200 bookings each.
 *
 * Run: `node --import @swc-node/register/esm-register test/measure/availability-rules.ts` (after `npm run codegen`;
 * about a minute). MEASURE_BLOCKS (default 12) blocks of MEASURE_CALLS (default 100) calls per statement;
 * MEASURE_EXPLAIN=0 leaves the plans out; MEASURE_VARIANTS names a module of other statements to time in the same
 * blocks (to compare a change with the commit before it in one run). Linux only (reads /proc).
 *
 * The cluster is durable, as the bench's: with fsync off, VACUUM right after the seed did not mark its pages
 * all-visible, and every slot was then read from the heap (5,000 heap fetches a statement).
 */
import 'reflect-metadata';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { seedAvailabilityBookings } from '../bench/availability-seed.js';
import { AVAILABILITY } from '../../src/modules/availability/sql/availability.sql.js';
import { entities, sqlDefinitions } from '../../src/modules/index.js';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../../src/platform/db/orm.js';
import { createLogger } from '../../src/platform/logger.js';

const AGENTS = 10;
const BOOKINGS_PER_AGENT = 500;
const FROM = '2160-03-01T00:00:00.000Z';
const TO = '2160-03-31T00:00:00.000Z';
const FILLER_AGENTS = 1_000;
const FILLER_BOOKINGS = 200;
const BLOCKS = Number(process.env.MEASURE_BLOCKS ?? 12);
const CALLS = Number(process.env.MEASURE_CALLS ?? 100);
/** The service's bound (AVAILABILITY_LIMITS.maxBookedSlots). */
const MAX_BOOKED_SLOTS = 50_000;
const CLOCK_TICKS_PER_SECOND = 100;

const dir = await mkdtemp(join(tmpdir(), 'gateway-measure-availability-'));
const logger = createLogger('warn');
const database = await startEmbeddedPostgres({ dataDir: dir, logger, statementStats: true });
const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger });
await migrate(orm, database.url, sqlDefinitions);
await orm.close();
const db = new pg.Pool({ connectionString: database.url, max: 4 });
await db.query('create extension if not exists pg_stat_statements');

const newIds = (count: number) => Array.from({ length: count }, () => randomUUID());
async function insertAgents(ids: string[], parentId: string | null, prefix: string, visibility = 'anyone') {
  await db.query(
    `insert into agents (id, name, metadata, config, token_hash, parent_id, created_at, free_busy_visibility)
     select id, $2 || ord, '{}', '{}', md5(id::text), $3, now(), $4 from unnest($1::uuid[]) with ordinality as t(id, ord)`,
    [ids, prefix, parentId, visibility],
  );
}

// ---- Seed, as test/bench/run.ts does for S8 and S13.
const [rootId] = newIds(1) as [string];
await insertAgents([rootId], null, 'root', 'family');
const filler = newIds(FILLER_AGENTS);
await insertAgents(filler, rootId, 'filler-', 'family');
await db.query(
  `with b as (
     insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
     select gen_random_uuid(), a.id, s.at, s.at + interval '30 minutes', 'confirmed', null, '[]', now(), s.at + interval '30 minutes'
       from unnest($1::uuid[]) as a(id)
      cross join (select timestamptz '2030-01-01T00:00:00Z' + i * interval '43 hours' as at from generate_series(0, $2 - 1) i) s
     returning id, agent_id, starts_at, ends_at)
   insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until) select id, agent_id, starts_at, ends_at, starts_at, ends_at from b`,
  [filler, FILLER_BOOKINGS],
);
const plain = newIds(AGENTS);
const ruled = newIds(AGENTS);
await insertAgents(plain, rootId, 's8-');
await insertAgents(ruled, rootId, 's13-');
await db.query(
  `insert into availability_rules (agent_id, time_zone, weekly_hours, buffer_before_minutes, buffer_after_minutes, minimum_notice_minutes,
                                   maximum_advance_days, daily_limit, weekly_limit, enforce_on_own_bookings, updated_at)
   select id, 'Europe/Berlin', $2::text[]::int4multirange[], 0, 5, 0, null, 18, 150, true, now() from unnest($1::uuid[]) as a(id)`,
  [ruled, [...Array<string>(5).fill('{[420,720),[780,1200)}'), '{[540,780)}', '{}']],
);
// S8: 15-minute bookings; S13: the same starts, 10 minutes long, each blocking 5 minutes more (its buffer after).
for (const [ids, minutes, after] of [
  [plain, 15, 0],
  [ruled, 10, 5],
] as const) {
  await seedAvailabilityBookings(db, { agentIds: ids, from: FROM, to: TO, perAgent: BOOKINGS_PER_AGENT, minutes, bufferBefore: 0, bufferAfter: after });
}
// After a checkpoint (the inserts' commit records flushed), so that vacuum marks the pages all-visible and the slots are
// read index-only, as in the bench.
await db.query('checkpoint');
await db.query('vacuum (analyze) agents, bookings, booking_slots, availability_rules, agent_day_slots');

// ---- One connection; the statement named, as the gateway sends it.
const client = await db.connect();
const backendPid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
await client.query(`set pg_stat_statements.track_planning = on`);
await client.query(`set track_functions = 'all'`);
const backendCpuSeconds = async () => {
  const stat = await readFile(`/proc/${backendPid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
};
const paramsFor = (agents: string[], n: number) => {
  const caller = agents[n % agents.length]!;
  return [caller, agents.filter((id) => id !== caller), new Date(FROM), new Date(TO), 30, 15, 51, MAX_BOOKED_SLOTS, new Date()];
};
/** A statement timed here: the gateway's on each shape, and any variants (MEASURE_VARIANTS) on S13's agents. */
interface Timed {
  label: string;
  agents: string[];
  name: string;
  text: string;
}
const timed: Timed[] = [
  { label: 'S8', agents: plain, name: AVAILABILITY.name, text: AVAILABILITY.text },
  { label: 'S13', agents: ruled, name: AVAILABILITY.name, text: AVAILABILITY.text },
];
// MEASURE_VARIANTS: a module exporting `setup` (SQL run once first, e.g. functions a variant calls) and `variants`
// (label → statement text taking the availability statement's parameters), to try a change against the same data.
if (process.env.MEASURE_VARIANTS) {
  const module = (await import(process.env.MEASURE_VARIANTS)) as { setup?: string; variants: Record<string, string> };
  if (module.setup) await client.query(module.setup);
  for (const [label, text] of Object.entries(module.variants)) timed.push({ label, agents: ruled, name: `variant_${timed.length}`, text });
}
const call = (statement: Timed, n: number) => client.query({ name: statement.name, text: statement.text, values: paramsFor(statement.agents, n) });

const digest = async (statement: Timed) => {
  const hash = createHash('sha256');
  let starts = 0;
  for (let n = 0; n < statement.agents.length; n++) {
    const row = (await call(statement, n)).rows[0] as { starts: Date[] | null; crowded: boolean | null; refused: string[] | null };
    if (row.refused || row.crowded) throw new Error(`caller ${n}: refused ${String(row.refused)}, crowded ${String(row.crowded)}`);
    starts += row.starts!.length;
    hash.update(`${n}:${row.starts!.map((start) => start.toISOString()).join(',')};`);
  }
  return `${starts} starts over ${statement.agents.length} callers, sha256 ${hash.digest('hex').slice(0, 16)}`;
};

for (const statement of timed) {
  for (let n = 0; n < 30; n++) await call(statement, n);
  console.log(`answers ${statement.label}: ${await digest(statement)}`);
}

await client.query('select pg_stat_statements_reset()');
await client.query('select pg_stat_reset()');
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const block = async (statement: Timed, round: number) => {
  const cpu = await backendCpuSeconds();
  const started = performance.now();
  for (let n = 0; n < CALLS; n++) await call(statement, round * CALLS + n);
  return { wallMs: (performance.now() - started) / CALLS, cpuMs: (((await backendCpuSeconds()) - cpu) * 1000) / CALLS };
};
const results = timed.map(() => [] as { wallMs: number; cpuMs: number }[]);
for (let round = 0; round < BLOCKS; round++) {
  // Each round starts with the next statement, so that none always follows the same one.
  for (let k = 0; k < timed.length; k++) {
    const i = (round + k) % timed.length;
    results[i]!.push(await block(timed[i]!, round));
  }
}
const fixed = (value: number, digits = 2) => value.toFixed(digits);
const spread = (values: number[], digits = 2) => `${fixed(median(values), digits)} (${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)})`;
console.log(`${BLOCKS} blocks of ${CALLS} calls per statement, one connection; ratios to S8 per block, median (min–max)`);
for (const [i, statement] of timed.entries()) {
  const runs = results[i]!;
  const base = results[0]!;
  console.log(
    `${statement.label}: wall ${spread(runs.map((run) => run.wallMs))} ms, backend CPU ${spread(runs.map((run) => run.cpuMs))} ms per call; ` +
      `/S8 wall ${spread(runs.map((run, k) => run.wallMs / base[k]!.wallMs))}, CPU ${spread(runs.map((run, k) => run.cpuMs / base[k]!.cpuMs))}`,
  );
}

const statements = await client.query<{ calls: string; plans: string; mean_plan: number; mean_exec: number }>(
  `select calls, plans, mean_plan_time as mean_plan, mean_exec_time as mean_exec from pg_stat_statements where query like 'with asked as materialized%' order by calls desc`,
);
for (const row of statements.rows) console.log(`pg_stat_statements: ${row.calls} calls, ${row.plans} plans, plan ${fixed(row.mean_plan, 3)} ms, execution ${fixed(row.mean_exec, 3)} ms `);
const functions = await client.query<{ funcname: string; calls: string; self_time: number; total_time: number }>(
  'select funcname, calls, self_time, total_time from pg_stat_user_functions order by total_time desc limit 10',
);
for (const row of functions.rows) console.log(`function ${row.funcname}: ${row.calls} calls, self ${fixed(row.self_time)} ms, total ${fixed(row.total_time)} ms`);

if (process.env.MEASURE_EXPLAIN !== '0') {
  const visibility = await client.query<{ relpages: number; relallvisible: number }>(`select relpages, relallvisible from pg_class where relname = 'booking_slots'`);
  console.log(`\nbooking_slots: ${visibility.rows[0]!.relpages} pages, ${visibility.rows[0]!.relallvisible} all-visible`);
  await client.query('set plan_cache_mode = force_generic_plan');
  await client.query(`prepare explained as ${AVAILABILITY.text}`);
  for (const [shape, agents] of [
    ['S8', plain],
    ['S13', ruled],
  ] as const) {
    const values = paramsFor(agents, 0).map((value) => (value instanceof Date ? value.toISOString() : Array.isArray(value) ? `{${value.join(',')}}` : String(value)));
    const literal = values.map((value) => `'${value.replaceAll("'", "''")}'`).join(', ');
    const plan = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) execute explained(${literal})`);
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS), ${shape}, generic plan:\n${plan.rows.map((row) => row['QUERY PLAN']).join('\n')}`);
  }
}

client.release();
await db.end();
await database.stop();
await rm(dir, { recursive: true, force: true });
