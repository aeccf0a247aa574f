/**
 * Where a GraphQL page's server CPU goes, next to the same page through REST: bench S3 (`bookings(first:
 * 50) { … agent { id name } }`) and S2 (`GET /api/bookings`, limit 50), in one process, 16 requests in
 * flight, agents round-robin, on an embedded PostgreSQL (fsync off: the figures are the gateway's CPU).
 *
 * Two transports (MEASURE_TRANSPORT):
 * - `inject` (the default): `app.inject`, no sockets; the CPU left is the request path itself, Fastify's
 *   included. Quick, but it hides what sockets cost: S3's excess over S2 measured 35 µs per request here
 *   against 100 µs over sockets.
 * - `socket`: the server listens and autocannon drives it from a process of its own (http-load.ts), each
 *   run MEASURE_SECONDS long, as the bench does; the figures to compare with the bench's.
 *
 * Prints the gateway process's CPU per request of each (process.cpuUsage, PostgreSQL's CPU apart), rounds
 * alternating the scenarios; with MEASURE_PROFILE=1, then a CPU profile of each (the inspector's sampling
 * profiler): self time by package and the top functions, and, with MEASURE_PROFILE_DIR, the `.cpuprofile`
 * files to open in a viewer.
 *
 * Run: `NODE_ENV=production node --import @swc-node/register/esm-register test/measure/graphql-request.ts`
 * (after `npm run codegen`); NODE_ENV as `npm start` and the bench run the gateway (graphql-js checks its
 * types more slowly outside production). MEASURE_REQUESTS (4,000, inject), MEASURE_SECONDS (8, socket),
 * MEASURE_ROUNDS (5), MEASURE_SCENARIOS (S2,S3).
 */
import 'reflect-metadata';
import type { InjectOptions } from 'fastify';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { migrations } from '../../migrations/index.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { entities, sqlDefinitions } from '../../src/modules/index.js';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../../src/platform/db/orm.js';
import { createLogger } from '../../src/platform/logger.js';

if (process.env.NODE_ENV !== 'production') throw new Error('run with NODE_ENV=production, as `npm start` and the bench run the gateway');
const REQUESTS = Number(process.env.MEASURE_REQUESTS ?? 4_000);
const SECONDS = Number(process.env.MEASURE_SECONDS ?? 8);
const TRANSPORT = process.env.MEASURE_TRANSPORT ?? 'inject';
if (TRANSPORT !== 'inject' && TRANSPORT !== 'socket') throw new Error(`MEASURE_TRANSPORT: inject or socket, not ${TRANSPORT}`);
const IN_FLIGHT = 16;
const AGENTS = 64;
const PROFILE_DIR = process.env.MEASURE_PROFILE_DIR;
const SCENARIOS = (process.env.MEASURE_SCENARIOS ?? 'S2,S3').split(',');
const METRICS_TOKEN = 'measure-metrics-token-0123456789';
const LIST_FROM = '2030-04-01T00:00:00.000Z';
const LIST_TO = '2030-07-01T00:00:00.000Z';
const GRAPHQL_LIST = JSON.stringify({
  query: `{ bookings(from: "${LIST_FROM}", to: "${LIST_TO}", first: 50) { edges { node { id startsAt endsAt status agent { id name } } } } }`,
});

const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
const dir = await mkdtemp(join(tmpdir(), 'gateway-measure-graphql-'));
const database = await startEmbeddedPostgres({ dataDir: dir, logger, ephemeral: true });
const migrator = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
await migrate(migrator, database.url, sqlDefinitions).finally(() => migrator.close());
const config = loadConfig({
  DATABASE_URL: database.url,
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  BOOKING_CAP: '100000000',
  RATE_LIMIT_ANON_PER_MIN: '1000000000',
  RATE_LIMIT_AUTH_PER_MIN: '1000000000',
  AGENT_CREATE_PER_MIN: '1000000',
  PRICE_PROVIDERS: '',
  GRAPHQL_EXPLORER: 'false',
  // A socket run's pages outlast the default budget of 64 callers; the budget's cost is measured all the same.
  GRAPHQL_COST_PER_MIN: '1000000000',
  METRICS_TOKEN,
});
const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, timeouts: config.databaseTimeouts, pooling: config.databasePooling });
const app = await buildApp({ config, orm, logger, databaseUrl: database.url, directDatabaseUrl: database.url, jobs: false });

async function call(options: InjectOptions): Promise<{ statusCode: number; body: string }> {
  const response = await app.inject(options);
  return { statusCode: response.statusCode, body: response.body };
}

const root = JSON.parse((await call({ method: 'POST', url: '/api/agents', payload: { name: 'root', bootstrap: true } })).body) as { public_token: string };
const tokens: string[] = [];
await Promise.all(
  Array.from({ length: 8 }, async (_, worker) => {
    for (let i = worker; i < AGENTS; i += 8) {
      const made = await call({ method: 'POST', url: '/api/agents', headers: { authorization: `Bearer ${root.public_token}` }, payload: { name: `agent-${i}` } });
      const { id, public_token: token } = JSON.parse(made.body) as { id: string; public_token: string };
      tokens[i] = token;
      for (let b = 0; b < 60; b++) {
        const startsAt = new Date(Date.parse(LIST_FROM) + b * 36 * 3_600_000);
        const created = await call({
          method: 'POST',
          url: '/api/bookings',
          headers: { authorization: `Bearer ${token}` },
          payload: { agentId: id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() },
        });
        if (created.statusCode !== 201) throw new Error(`seeding: ${created.statusCode} ${created.body}`);
      }
    }
  }),
);

const requests = {
  S2: (n: number) => ({
    method: 'GET' as const,
    url: `/api/bookings?from=${encodeURIComponent(LIST_FROM)}&to=${encodeURIComponent(LIST_TO)}&limit=50`,
    headers: { authorization: `Bearer ${tokens[n % AGENTS]}` },
  }),
  S3: (n: number) => ({
    method: 'POST' as const,
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[n % AGENTS]}` },
    payload: GRAPHQL_LIST,
  }),
};

const tokensFile = join(dir, 'load.json');
const address = TRANSPORT === 'socket' ? await app.listen({ port: 0, host: '127.0.0.1' }) : undefined;
const run = promisify(execFile);

/** Runs a scenario: MEASURE_REQUESTS through inject, or MEASURE_SECONDS of autocannon over sockets (a warm-up: fewer). Answers how many were made. */
async function measured(scenario: keyof typeof requests, warmUp = false): Promise<number> {
  if (!address) {
    const count = warmUp ? 2_000 : REQUESTS;
    await load(scenario, count);
    return count;
  }
  const { method, url, headers, payload } = requests[scenario](0) as { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; payload?: string };
  const { authorization: _authorization, ...shared } = headers;
  await writeFile(tokensFile, JSON.stringify({ request: { method, path: url, headers: shared, ...(payload ? { body: payload } : {}) }, tokens }));
  const child = fileURLToPath(new URL('./http-load.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', '@swc-node/register/esm-register', child, address, String(warmUp ? 2 : SECONDS), tokensFile]);
  const { requests: made, non2xx, errors } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { requests: number; non2xx: number; errors: number };
  if (non2xx || errors) throw new Error(`${scenario}: of ${made} requests, ${non2xx} answered other than 2xx and ${errors} failed`);
  return made;
}

async function load(scenario: keyof typeof requests, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const response = await call(requests[scenario](next++));
      if (response.statusCode !== 200) throw new Error(`${scenario}: ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Self time by package (node_modules/<name>, our src/…, node internals) and by function. */
function summarise(profile: { nodes: ProfileNode[] }): void {
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits) continue;
    total += hits;
    const url = node.callFrame.url;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.includes('/src/') ? `src/${/\/src\/(.*)$/.exec(url)?.[1]}` : url || `(${node.callFrame.functionName || 'native'})`);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^.*\/src\//, 'src/')}:${node.callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, hits]) => `  ${((100 * hits) / total).toFixed(1).padStart(5)} %  ${name}`).join('\n');
  console.log(`self time by package (${total} samples):\n${top(byPackage, 30)}\nby function:\n${top(byFunction, 45)}`);
}

const ROUNDS = Number(process.env.MEASURE_ROUNDS ?? 5);
const scenarios = SCENARIOS as (keyof typeof requests)[];
for (const scenario of scenarios) await measured(scenario, true); // warm: compiled operations, JIT, pools
// Rounds alternate the scenarios, so that a busy moment of a shared machine falls on all of them.
const readings = new Map<string, number[]>(scenarios.map((scenario) => [scenario, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const scenario of scenarios) {
    const before = process.cpuUsage();
    const made = await measured(scenario);
    const used = process.cpuUsage(before);
    readings.get(scenario)!.push((used.user + used.system) / 1000 / made);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [scenario, values] of readings) {
  console.log(`${scenario}: ${median(values).toFixed(3)} ms CPU per request (median of ${ROUNDS}; min ${Math.min(...values).toFixed(3)}, max ${Math.max(...values).toFixed(3)})`);
}
if (readings.has('S2') && readings.has('S3')) console.log(`S3 / S2 CPU per request: ${(median(readings.get('S3')!) / median(readings.get('S2')!)).toFixed(2)}`);
const answers = await call({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
console.log(answers.statusCode, answers.body.split('\n').filter((line) => line.includes('http_answers')).join('\n'));
if (process.env.MEASURE_PROFILE === '1') {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  for (const scenario of scenarios) {
    await session.post('Profiler.start');
    const made = await measured(scenario);
    const { profile } = await session.post('Profiler.stop');
    console.log(`\n## ${scenario} (${made} requests)`);
    summarise(profile as unknown as { nodes: ProfileNode[] });
    if (PROFILE_DIR) await writeFile(join(PROFILE_DIR, `${scenario}.cpuprofile`), JSON.stringify(profile));
  }
  session.disconnect();
}

await app.close();
await orm.close(true);
await database.stop();
await rm(dir, { recursive: true, force: true });
