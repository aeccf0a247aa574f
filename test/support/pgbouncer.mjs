// PgBouncer from the system's package (Debian: `apt-get install pgbouncer`), run as a child process in
// front of a test PostgreSQL. Plain JavaScript: jest's global setup loads it outside the TypeScript
// pipeline (see global-setup.mjs); the soak and the tests import it with pgbouncer.d.mts.
import { execFileSync, spawn } from 'node:child_process';
import { access, chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.mjs';

/** The pgbouncer executable on PATH or in the Debian package's /usr/sbin, or undefined. */
export async function findPgBouncer() {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin']) {
    if (!dir) continue;
    const candidate = join(dir, 'pgbouncer');
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return undefined;
}

/** What to tell someone who runs the pooler tests without PgBouncer. */
export const PGBOUNCER_MISSING =
  'pgbouncer is not installed: these runs put PgBouncer (transaction mode) in front of PostgreSQL. ' +
  'Install it (Debian/Ubuntu: apt-get install -y pgbouncer) and run again.';

function postgresIds() {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/**
 * Starts PgBouncer in `pool_mode` (transaction by default) in front of the PostgreSQL `serverUrl`
 * points at, for every database on it (`* =`), with that URL's user and password. `poolSize` server
 * connections per database and user: small, so that clients really share them. It refuses startup
 * parameters it does not know, as PgBouncer 1.18 (Debian 12) does by default.
 */
export async function startPgBouncer({ serverUrl, poolSize = 8, poolMode = 'transaction', maxClients = 2000 }) {
  const binary = await findPgBouncer();
  if (!binary) throw new Error(PGBOUNCER_MISSING);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const dir = await mkdtemp(join(tmpdir(), 'gateway-pgbouncer-'));
  const port = await freePort();
  const quoted = (text) => `"${text.replaceAll('"', '""')}"`;
  await writeFile(join(dir, 'userlist.txt'), `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `pool_mode = ${poolMode}`,
      `default_pool_size = ${poolSize}`,
      `max_client_conn = ${maxClients}`,
      'reserve_pool_size = 0',
      // The clients wait for a server connection rather than fail: queueing is what a pooler does.
      'query_wait_timeout = 60',
      'server_reset_query =',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  // PgBouncer will not run as root; it runs as the user the embedded PostgreSQL runs as.
  const ids = process.getuid?.() === 0 ? postgresIds() : undefined;
  if (ids) {
    await chmod(dir, 0o700);
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) await chown(join(dir, file), ids.uid, ids.gid);
  }
  const child = spawn(binary, [join(dir, 'pgbouncer.ini')], { ...(ids ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  child.stderr.on('data', (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const urlFor = (database) => {
    const url = new URL(serverUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited at start:\n${log}`);
    const client = new pg.Client({ connectionString: urlFor(server.pathname.slice(1) || 'postgres') });
    client.on('error', () => undefined);
    const up = await client.connect().then(
      () => true,
      () => false,
    );
    await client.end().catch(() => undefined);
    if (up) break;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not accept connections within 10 s:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    urlFor,
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
