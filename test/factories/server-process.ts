import { spawn, type ChildProcess } from 'node:child_process';
import { SMTP_NOT_SET_WARNING } from '../../src/platform/mail/mailer.js';
import { databaseEnv } from '../support/database-env.js';

export { SMTP_NOT_SET_WARNING };

// The real entry point, as `npm start` runs it. Without DATABASE_URL in `env`, on its own embedded database.
const ENTRY = ['--import', '@swc-node/register/esm-register', 'src/main.ts'];

export interface RunningServer {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export interface ServerProcessOptions {
  /** Modules preloaded with `--import` before the entry (test probes). */
  imports?: readonly string[];
}

export function startServer(env: Record<string, string>, options: ServerProcessOptions = {}): RunningServer {
  const { DATABASE_URL: _fromTestSetup, ...inherited } = process.env;
  const preloads = (options.imports ?? []).flatMap((module) => ['--import', module]);
  // A test database named by DATABASE_URL is reached as every gateway of the run reaches it (harness.ts).
  const database = env.DATABASE_URL && isTestDatabase(env.DATABASE_URL) ? databaseEnv(env.DATABASE_URL) : {};
  const child = spawn(process.execPath, [...preloads, ...ENTRY], {
    env: { ...inherited, NODE_OPTIONS: '', LOG_LEVEL: 'info', ...env, ...database },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Whether `url` names a database on the test run's PostgreSQL (not a proxy a test put in front of it). */
function isTestDatabase(url: string): boolean {
  const admin = process.env.TEST_POSTGRES_ADMIN_URL;
  return admin !== undefined && new URL(admin).host === new URL(url).host;
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
