import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../../../src/platform/db/embedded-postgres.js';
import { createLogger } from '../../../src/platform/logger.js';
import { startServer } from '../../factories/server-process.js';

/** The README's promise: one line on stderr naming the variable and what it accepts, a non-zero exit within 5 s. */
const EXIT_WITHIN_MS = 5_000;

describe('a configuration the process cannot run with', () => {
  let scratch: string;
  let busyPort: number;
  let portHolder: Server;
  let inUseDataDir: string;
  let holder: EmbeddedDatabase;

  beforeAll(async () => {
    // The process is the one `npm start` runs; building is a no-op when dist/ is current.
    await promisify(execFile)(process.execPath, ['scripts/build.ts', 'server'], { env: { ...process.env, NODE_OPTIONS: '' } });
    scratch = await mkdtemp(join(tmpdir(), 'gateway-config-'));
    await writeFile(join(scratch, 'a-file'), 'not a folder');
    busyPort = await freePort();
    portHolder = createServer();
    await new Promise<void>((resolve) => portHolder.listen(busyPort, '127.0.0.1', resolve));
    // A data folder another process is using: a PostgreSQL cluster running on it.
    // Its own temporary folder: as root the cluster runs as `postgres`, which cannot enter `scratch` (0700).
    inUseDataDir = await mkdtemp(join(tmpdir(), 'gateway-in-use-'));
    holder = await startEmbeddedPostgres({ dataDir: inUseDataDir, logger: createLogger('silent'), ephemeral: true });
  }, 180_000);

  afterAll(async () => {
    await holder?.stop();
    portHolder?.close();
    await rm(scratch, { recursive: true, force: true });
    await rm(inUseDataDir, { recursive: true, force: true });
  });

  const cases: [string, () => Record<string, string>, RegExp][] = [
    ['SMTP_URL', () => ({ SMTP_URL: 'notaurl' }), /^Invalid configuration: SMTP_URL must be a URL starting with smtp:\/\/ or smtps:\/\/ \(smtp:\/\/user:password@mail\.example\.com:587\)$/],
    ['DATABASE_URL', () => ({ DATABASE_URL: 'garbage' }), /^Invalid configuration: DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\/ \(postgres:\/\/user:password@host:5432\/database\)$/],
    ['BOOKING_CAP', () => ({ BOOKING_CAP: '-1' }), /^Invalid configuration: BOOKING_CAP must be a whole number, 1 or more$/],
    ['LOG_LEVEL', () => ({ LOG_LEVEL: 'verbose' }), /^Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent$/],
    ['PORT', () => ({ PORT: 'eighty' }), /^Invalid configuration: PORT must be a whole number from 0 to 65535 \(0: any free port\)$/],
    ['DATA_DIR', () => ({ DATA_DIR: '/proc/nope' }), /^Cannot start: DATA_DIR \/proc\/nope cannot be used \(no folder can be created there\); set DATA_DIR to a folder this user can create and write$/],
    ['DATA_DIR', () => ({ DATA_DIR: join(scratch, 'a-file') }), /^Cannot start: DATA_DIR \S+\/a-file cannot be used \(not a folder\); set DATA_DIR to a folder this user can create and write$/],
    ['DATA_DIR', () => ({ DATA_DIR: inUseDataDir }), /^Cannot start: DATA_DIR \S+\/gateway-in-use-\w+ is in use by another running gateway \(its PostgreSQL has pid \d+\); stop that process or set DATA_DIR to another folder$/],
    ['PORT', () => ({ PORT: String(busyPort) }), /^Cannot start: PORT \d+ on 127\.0\.0\.1 is already in use by another process; stop it or set PORT to a free port \(0: any\)$/],
  ];

  it.each(cases)('%s: says so in one line on stderr, without a stack, and exits non-zero within 5 s (%#)', async (_variable, env, message) => {
    const started = performance.now();
    const server = startServer({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(scratch, 'data'), PRICE_PROVIDERS: '', ...env() }, { built: true });
    const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
    const code = await server.exited.finally(() => clearTimeout(timer));
    const elapsedMs = performance.now() - started;
    const stderrLines = server.errorOutput().split('\n').filter(Boolean);
    expect({ code, stderrLines }).toEqual({ code: 1, stderrLines: [expect.stringMatching(message)] });
    // Nothing logged on stdout at error level either (no shutdown noise after the failure).
    expect(server.output().split('\n').filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
    expect(elapsedMs).toBeLessThan(EXIT_WITHIN_MS);
  }, 40_000);
});
