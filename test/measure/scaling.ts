/**
 * The figures docs/scaling.md sizes a deployment with, measured on a durable embedded PostgreSQL
 * (fsync, synchronous_commit and full_page_writes on) and one gateway process (`src/main.ts`):
 *
 *   1. connections: PostgreSQL client backends at start and at most while 16 clients create bookings;
 *   2. WAL per booking create: 5,000 creates right after a CHECKPOINT (each pays the full-page images
 *      of the pages it is the first to change since), then 5,000 more; the statements that wrote it
 *      (pg_stat_statements); and PostgreSQL's CPU per create (every process of the cluster);
 *   3. replay speed: a streaming standby paused while 10,000 creates are written, then resumed: how
 *      long it takes to replay them (single-threaded recovery, as in production);
 *   4. NOTIFY: deliveries per second to 1 and to 4 listeners from one connection sending 500
 *      notifications per statement, and commits per second of 8 writers with and without a NOTIFY
 *      inside each transaction.
 *
 * Run: `node --import @swc-node/register/esm-register test/measure/scaling.ts` (after `npm run codegen`;
 * several minutes; nothing else of the project should run meanwhile). It prints one line per figure.
 * Linux only (reads /proc for PostgreSQL's CPU time).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { createLogger } from '../../src/platform/logger.js';
import { startStreamingReplica } from '../factories/streaming-replica.js';

const CREATE_CONCURRENCY = 16;
const AGENTS = 50;
/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these. */
const CLOCK_TICKS_PER_SECOND = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds (user + system) of the postmaster whose data directory is `clusterDir` and of its children alive now. */
async function clusterCpuSeconds(clusterDir: string): Promise<number> {
  const postmaster = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  let ticks = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    // Fields after the command name (which may hold spaces): state, ppid, …; utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(entry) !== postmaster && Number(fields[1]) !== postmaster) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

const dir = await mkdtemp(join(tmpdir(), 'gateway-measure-scaling-'));
const clusterDir = join(dir, 'pg');
const database = await startEmbeddedPostgres({ dataDir: dir, logger: createLogger('warn'), statementStats: true });
const db = new pg.Pool({ connectionString: database.url, max: 4 });
const port = await freePort();
const gateway = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', 'src/main.ts'], {
  env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', PRICE_PROVIDERS: '', BOOKING_CAP: '100000000' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
while (!(await fetch(`${base}/readyz`).then((response) => response.ok, () => false))) await sleep(100);

const post = async (path: string, token: string | undefined, body: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
};
const clientBackends = async () => (await db.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where backend_type = 'client backend'`)).rows[0]!.n;
const walPosition = async () => BigInt((await db.query<{ bytes: string }>(`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint::text as bytes`)).rows[0]!.bytes);

const root = (await post('/api/agents', undefined, { name: 'root', bootstrap: true })).body;
const agents: { id: string; token: string }[] = [];
for (let i = 0; i < AGENTS; i++) {
  const made = (await post('/api/agents', root.public_token, { name: `agent ${i}` })).body;
  agents.push({ id: made.id!, token: made.public_token! });
}
await db.query('create extension if not exists pg_stat_statements');
const idleBackends = await clientBackends();

/** `creates` bookings by CREATE_CONCURRENCY clients, each agent's slots an hour apart from `firstHour` on. */
async function createBookings(creates: number, firstHour: number): Promise<{ seconds: number; peakBackends: number; cpuSeconds: number }> {
  let next = 0;
  let peakBackends = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakBackends = Math.max(peakBackends, await clientBackends());
      await sleep(200);
    }
  })();
  const cpuBefore = await clusterCpuSeconds(clusterDir);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < creates) {
        const n = next++;
        const agent = agents[n % AGENTS]!;
        const startsAt = new Date(Date.UTC(2050, 0, 1) + (firstHour + Math.floor(n / AGENTS)) * 3_600_000);
        const created = await post('/api/bookings', agent.token, { agentId: agent.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() });
        if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = (await clusterCpuSeconds(clusterDir)) - cpuBefore;
  sampling = false;
  await sampler;
  return { seconds, peakBackends, cpuSeconds };
}

// 1–2. Connections, WAL and PostgreSQL CPU per create.
await createBookings(500, 0);
await db.query('checkpoint');
await db.query('select pg_stat_statements_reset()');
let before = await walPosition();
let run = await createBookings(5_000, 100_000);
let written = Number((await walPosition()) - before);
console.log(`client backends: ${idleBackends} after start and 50 agents, at most ${run.peakBackends} under ${CREATE_CONCURRENCY} concurrent creates (this script's pool of up to 4 included)`);
console.log(
  `5,000 creates after a CHECKPOINT: ${run.seconds.toFixed(1)} s (${(5_000 / run.seconds).toFixed(0)}/s), WAL ${(written / 1e6).toFixed(1)} MB = ${Math.round(written / 5_000)} B per create, ` +
    `PostgreSQL CPU ${((run.cpuSeconds * 1000) / 5_000).toFixed(2)} ms per create`,
);
const statements = await db.query<{ calls: string; wal_records: string; wal_fpi: string; wal_bytes: string; query: string }>(
  `select calls, wal_records, wal_fpi, wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 80) as query
     from pg_stat_statements where wal_bytes > 0 order by wal_bytes desc limit 6`,
);
for (const row of statements.rows) {
  console.log(`  ${row.calls} calls, ${row.wal_records} WAL records, ${row.wal_fpi} full-page images, ${(Number(row.wal_bytes) / 1e6).toFixed(2)} MB: ${row.query}`);
}
before = await walPosition();
run = await createBookings(5_000, 200_000);
written = Number((await walPosition()) - before);
console.log(
  `the next 5,000 creates: ${run.seconds.toFixed(1)} s (${(5_000 / run.seconds).toFixed(0)}/s), WAL ${(written / 1e6).toFixed(1)} MB = ${Math.round(written / 5_000)} B per create, ` +
    `PostgreSQL CPU ${((run.cpuSeconds * 1000) / 5_000).toFixed(2)} ms per create`,
);

// 3. Replay speed of a standby that fell behind.
const replica = await startStreamingReplica({ primaryUrl: database.url, primaryDataDir: clusterDir, durable: true });
const standby = new pg.Client({ connectionString: replica.urlFor('postgres') });
await standby.connect();
await standby.query('select pg_wal_replay_pause()');
before = await walPosition();
run = await createBookings(10_000, 300_000);
written = Number((await walPosition()) - before);
const target = (await db.query<{ position: string }>('select pg_current_wal_insert_lsn()::text as position')).rows[0]!.position;
const resumed = performance.now();
await standby.query('select pg_wal_replay_resume()');
while ((await standby.query<{ behind: boolean }>(`select pg_last_wal_replay_lsn() < $1::pg_lsn as behind`, [target])).rows[0]!.behind) await sleep(10);
const replaySeconds = (performance.now() - resumed) / 1000;
console.log(
  `standby paused while 10,000 creates wrote ${(written / 1e6).toFixed(1)} MB in ${run.seconds.toFixed(1)} s (${(written / 1e6 / run.seconds).toFixed(1)} MB/s): ` +
    `replayed in ${replaySeconds.toFixed(2)} s = ${(written / 1e6 / replaySeconds).toFixed(0)} MB/s, ${Math.round(10_000 / replaySeconds)} creates' WAL per second`,
);
await standby.end();
await replica.destroy();
gateway.kill('SIGTERM');
await new Promise((resolve) => gateway.once('exit', resolve));

// 4. NOTIFY: fan-out to listeners, and what a NOTIFY inside the write costs its commits.
async function deliveriesPerSecond(listenerCount: number): Promise<number> {
  const listeners = await Promise.all(
    Array.from({ length: listenerCount }, async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const counter = { received: 0 };
      client.on('notification', () => counter.received++);
      await client.query('listen measure_fanout');
      return { client, counter };
    }),
  );
  const sender = new pg.Client({ connectionString: database.url });
  await sender.connect();
  const sent = { count: 0 };
  const started = performance.now();
  while (performance.now() - started < 3_000) {
    await sender.query(`select pg_notify('measure_fanout', i::text) from generate_series(1, 500) as i`);
    sent.count += 500;
  }
  // Every listener has everything once its count reaches what was sent.
  while (listeners.some((listener) => listener.counter.received < sent.count)) await sleep(5);
  const seconds = (performance.now() - started) / 1000;
  await Promise.all([sender.end(), ...listeners.map((listener) => listener.client.end())]);
  return sent.count / seconds;
}
console.log(`NOTIFY, 500 per statement from one connection: ${Math.round(await deliveriesPerSecond(1))} deliveries/s to 1 listener, ${Math.round(await deliveriesPerSecond(4))}/s to each of 4`);

async function commitsPerSecond(notifyInside: boolean): Promise<number> {
  await db.query('create table if not exists measure_writes (id bigserial primary key, at timestamptz not null default now())');
  let commits = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      while (performance.now() - started < 3_000) {
        await client.query('begin');
        await client.query('insert into measure_writes default values');
        if (notifyInside) await client.query(`select pg_notify('measure_writes', 'x')`);
        await client.query('commit');
        commits++;
      }
      await client.end();
    }),
  );
  return commits / ((performance.now() - started) / 1000);
}
const plainCommits = await commitsPerSecond(false);
const notifyingCommits = await commitsPerSecond(true);
console.log(`8 writers, an insert per transaction: ${Math.round(plainCommits)} commits/s; with a NOTIFY inside each: ${Math.round(notifyingCommits)} commits/s`);

await db.end();
await database.stop();
await rm(dir, { recursive: true, force: true });
