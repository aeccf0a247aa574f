// How long `npm start` (or `npm run seed:demo`) takes, as a person sees it: from the command to the
// "gateway ready" log line and to the first 200 on /healthz.
//
//   node test/bench/start-time.mjs [--runs 5] [--cold] [--command start|seed]
//
// Warm: the previous build and the data folder are kept (a second `npm start` with nothing changed).
// Cold: dist/ and the build's stamps are removed and the data folder is new, as after `npm ci` on a fresh clone.
// Plain JavaScript so that it runs before anything is built.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../support/free-port.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    cold: { type: 'boolean', default: false },
    command: { type: 'string', default: 'start' },
  },
});
const root = resolve(import.meta.dirname, '../..');
const runs = Number(values.runs);

async function once(dataDir) {
  if (values.cold) {
    for (const built of ['dist', 'src/web/generated', 'test/generated', 'node_modules/.cache/gateway-build']) await rm(join(root, built), { recursive: true, force: true });
  }
  const port = await freePort();
  const started = performance.now();
  const script = values.command === 'seed' ? ['run', 'seed:demo', '--', '--tools', '10', '--votes', '10', '--voters', '5'] : ['start'];
  const child = spawn('npm', script, {
    cwd: root,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', PRICE_PROVIDERS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  let readyMs;
  child.stdout.on('data', (chunk) => {
    output += chunk;
    if (readyMs === undefined && output.includes('"gateway ready"')) readyMs = performance.now() - started;
  });
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((done) => child.on('exit', (code) => done(code)));

  if (values.command === 'seed') {
    const code = await exited;
    if (code !== 0) throw new Error(`seed:demo exited ${code}:\n${output}`);
    return { doneMs: performance.now() - started };
  }
  let healthyMs;
  while (healthyMs === undefined) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
    if (performance.now() - started > 180_000) throw new Error(`not healthy after 180 s:\n${output}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.status === 200, () => false);
    if (ok) healthyMs = performance.now() - started;
    else await new Promise((wait) => setTimeout(wait, 25));
  }
  process.kill(-child.pid, 'SIGTERM');
  await exited;
  return { readyMs, healthyMs };
}

const summary = (label, numbers) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  const s = (ms) => (ms / 1000).toFixed(1);
  return `${label}: median ${s(median)} s (min ${s(sorted[0])}, max ${s(sorted.at(-1))}, ${sorted.length} runs)`;
};

const results = [];
const warmDir = await mkdtemp(join(tmpdir(), 'gateway-start-'));
if (!values.cold) await once(warmDir); // the warm-up: builds what it must and initialises the data folder
for (let run = 0; run < runs; run++) {
  const dataDir = values.cold ? await mkdtemp(join(tmpdir(), 'gateway-start-')) : warmDir;
  const result = await once(dataDir);
  results.push(result);
  console.log(JSON.stringify({ run: run + 1, ...Object.fromEntries(Object.entries(result).map(([key, ms]) => [key, Math.round(ms)])) }));
  if (values.cold) await rm(dataDir, { recursive: true, force: true });
}
await rm(warmDir, { recursive: true, force: true });
const mode = `${values.command} ${values.cold ? 'cold' : 'warm'}`;
for (const key of Object.keys(results[0])) console.log(summary(`${mode} ${key}`, results.map((result) => result[key])));
