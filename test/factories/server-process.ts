import { spawn, type ChildProcess } from 'node:child_process';
import { SMTP_NOT_SET_WARNING } from '../../src/platform/mail/mailer.js';
import { databaseEnv } from '../support/database-env.js';

export { SMTP_NOT_SET_WARNING };

// The real entry point from the sources. Without DATABASE_URL in `env`, on its own embedded database.
const ENTRY = ['--import', '@swc-node/register/esm-register', 'src/main.ts'];
// The entry `npm start` runs: the compiled server (`node scripts/build.ts server` first).
const BUILT_ENTRY = ['dist/src/main.js'];

export interface RunningServer {
  child: ChildProcess;
  /** stdout and stderr as they came. */
  output: () => string;
  /** stderr alone. */
  errorOutput: () => string;
  exited: Promise<number | null>;
}

export interface ServerProcessOptions {
  /** Modules preloaded with `--import` before the entry (test probes). */
  imports?: readonly string[];
  /** Run dist/src/main.js, as `npm start` does, instead of the sources. */
  built?: boolean;
}

export function startServer(env: Record<string, string>, options: ServerProcessOptions = {}): RunningServer {
  const { DATABASE_URL: _fromTestSetup, ...inherited } = process.env;
  const preloads = (options.imports ?? []).flatMap((module) => ['--import', module]);
  // A test database named by DATABASE_URL is reached as every gateway of the run reaches it (harness.ts).
  const database = env.DATABASE_URL && isTestDatabase(env.DATABASE_URL) ? databaseEnv(env.DATABASE_URL) : {};
  const child = spawn(process.execPath, [...preloads, ...(options.built ? BUILT_ENTRY : ENTRY)], {
    env: { ...inherited, NODE_OPTIONS: '', LOG_LEVEL: 'info', ...env, ...database },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let errorOutput = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => {
    output += chunk;
    errorOutput += chunk;
  });
  // 'close', not 'exit': by then both streams have been read to their end.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, errorOutput: () => errorOutput, exited };
}

/** Whether `url` names a database on the test run's PostgreSQL (not a proxy a test put in front of it). */
function isTestDatabase(url: string): boolean {
  const admin = process.env.TEST_POSTGRES_ADMIN_URL;
  return admin !== undefined && URL.canParse(url) && new URL(admin).host === new URL(url).host;
}

export async function waitFor(server: RunningServer, text: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!server.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for "${text}":\n${server.output()}`);
    if (server.child.exitCode !== null) throw new Error(`server exited early:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Log lines at warn level or above (pino levels 40+) but the SMTP_URL notice, and anything that is not JSON. */
export function errorLines(output: string): string[] {
  return output
    .split('\n')
    .filter(Boolean)
    .filter((line) => {
      try {
        const entry = JSON.parse(line) as { level: number; msg?: string };
        return entry.level >= 40 && entry.msg !== SMTP_NOT_SET_WARNING;
      } catch {
        return true;
      }
    });
}
