/**
 * The doc-test: every shell block of README.md and docs/*.md whose fence says `sh doc-test` runs, in
 * order, against a fresh server; a non-zero exit or an HTTP error status fails its file's test.
 * The convention is described in docs/testing.md.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import { startTestApp, type TestApp } from '../harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../factories/webhook-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MARK = 'doc-test';
/** The README's script starts on a fresh installation; every guide starts where it leaves off. */
const FRESH_INSTALLATION = new Set(['README.md']);
const FILE_TIMEOUT_MS = 30_000;
/** The operator's token the price-ingest example sends. */
const ADMIN_TOKEN = 'doc-test-admin-token';

interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
}

/** The fenced blocks whose info string is `sh doc-test` (or `bash doc-test`), in document order. */
function runnableBlocks(markdown: string): DocBlock[] {
  return new MarkdownIt()
    .parse(markdown, {})
    .filter((token) => token.type === 'fence')
    .filter((token) => {
      const [language, ...flags] = token.info.trim().split(/\s+/);
      return (language === 'sh' || language === 'bash') && flags.includes(MARK);
    })
    .map((token) => ({ line: token.map![0] + 1, code: token.content }));
}

/**
 * One bash script per file, so variables set by a block reach the next ones, as for a reader pasting
 * them in order. `set -u` fails on a variable no block set; curl gets `--fail-with-body`, so an HTTP
 * error status fails the block too. Each block announces itself on fd 3 to name the one that failed.
 */
function scriptOf(blocks: readonly DocBlock[]): string {
  const prelude = ['set -euo pipefail', 'curl() { command curl --fail-with-body "$@"; }'];
  const body = blocks.flatMap((block) => [`echo ${block.line} >&3`, block.code]);
  return [...prelude, ...body, ''].join('\n');
}

interface Run {
  code: number | null;
  output: string;
  /** The opening line of every block that started. */
  started: number[];
}

function runBash(script: string, env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      // Node 24 first on PATH: the blocks read JSON with `node -e`.
      env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let markers = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk) => (markers += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), FILE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, started: markers.split('\n').filter(Boolean).map(Number) });
    });
  });
}

async function documents(): Promise<Array<{ file: string; blocks: DocBlock[] }>> {
  const guides = (await readdir(path.join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).sort();
  const files = ['README.md', ...guides.map((name) => `docs/${name}`)];
  return Promise.all(files.map(async (file) => ({ file, blocks: runnableBlocks(await readFile(path.join(ROOT, file), 'utf8')) })));
}

const all = await documents();
const runnable = all.filter(({ blocks }) => blocks.length > 0);

test('the README and the main guides have runnable blocks', () => {
  const files = runnable.map(({ file }) => file);
  for (const expected of ['README.md', 'docs/scheduling.md', 'docs/graphql.md', 'docs/mcp.md', 'docs/booking-events.md']) {
    expect(files).toContain(expected);
  }
});

describe("the README's first ten minutes on an installation that has its first agent", () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  // The README has one marked block, the script.
  const script = runnable.find(({ file }) => file === 'README.md')!.blocks;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  test('stops at the bootstrap saying what to do, and runs to the end with TOKEN exported', async () => {
    const { port } = t.app.server.address() as AddressInfo;
    const env = { GATEWAY: `http://127.0.0.1:${port}`, WEBHOOK_URL: receiver.url };
    const claimed = await t.rest({ method: 'POST', url: '/api/agents', payload: { name: 'someone', bootstrap: true } });

    const refused = await runBash(scriptOf(script), env, ROOT);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('"error":"bootstrap_claimed"');
    expect(refused.output).toContain('export TOKEN=agt_');

    const run = await runBash(scriptOf(script), { ...env, TOKEN: claimed.json().public_token }, ROOT);
    if (run.code !== 0) throw new Error(`with TOKEN set the script exited with ${run.code}:\n${run.output.slice(-4000)}`);
    expect(run.output).toContain(`export GATEWAY=${env.GATEWAY} TOKEN=${claimed.json().public_token} AGENT_ID=${claimed.json().id}`);
    // Its webhook step registered the receiver and cancelled the booking: that event arrived.
    expect((await receiver.waitFor(1)).map((delivery) => delivery.json.type)).toEqual(['booking.cancelled']);
  });
});

describe('the runnable examples of README.md and docs/*.md', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    t = await startTestApp({ env: { ADMIN_TOKEN } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    receiver = await startWebhookReceiver();
  });

  afterEach(async () => {
    await receiver.close();
    await t.close();
  });

  afterAll(() => {
    // The per-file count, for the log of a run (a guide whose blocks lost their mark shows as 0 here).
    console.log(`doc-test blocks run:\n${all.map(({ file, blocks }) => `  ${file}: ${blocks.length}`).join('\n')}`);
  });

  test.each(runnable.map(({ file, blocks }) => [file, blocks] as const))('%s: its marked blocks run in order and succeed', async (file, blocks) => {
    const { port } = t.app.server.address() as AddressInfo;
    const env: Record<string, string> = { GATEWAY: `http://127.0.0.1:${port}`, WEBHOOK_URL: receiver.url, ADMIN_TOKEN };
    if (!FRESH_INSTALLATION.has(file)) {
      // What the README's first ten minutes leaves a reader with: the first agent's token and id.
      const agent = await t.rest({ method: 'POST', url: '/api/agents', payload: { name: 'first agent', bootstrap: true } });
      expect(agent.statusCode).toBe(201);
      env.TOKEN = agent.json().public_token;
      env.AGENT_ID = agent.json().id;
    }
    // From the clone's root, as a reader runs them (a block may read a file the build wrote).
    const run = await runBash(scriptOf(blocks), env, ROOT);
    if (process.env.DOC_TEST_LOG) console.log(`${file}:\n${run.output}`);
    const failed = run.started.at(-1);
    const where = `${file}, the block at line ${failed} (blocks at lines ${blocks.map((block) => block.line).join(', ')})`;
    if (run.code !== 0) throw new Error(`${where} exited with ${run.code}:\n${run.output.slice(-4000)}`);
    expect(run.started).toEqual(blocks.map((block) => block.line));
  });
});
