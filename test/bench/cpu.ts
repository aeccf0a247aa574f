/**
 * CPU time from /proc (Linux): what a server process, and the embedded PostgreSQL's processes, used during
 * a timed run. On this shared, noisy machine req/s moves with the neighbours (one S2 run measured the same
 * code at 0.81 and 1.13 of the reference); the CPU one request costs moves far less, so the bench reports
 * both. Where there is no /proc (or the database is not the embedded one) the figures are null.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** USER_HZ, the unit of /proc's utime and stime: 100 on every Linux Node.js runs on (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = 100;

interface ProcessTicks {
  parent: number;
  /** User + system time of all its threads, in ticks. */
  ticks: number;
}

async function ticksOf(pid: number): Promise<ProcessTicks | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // Fields after the command (which may hold spaces, so cut at its closing parenthesis): state, ppid, …
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** The postmaster (first line of postmaster.pid) and its children (backends, WAL writer, …) with their ticks, but for `exclude`. */
async function clusterTicks(clusterDir: string, exclude: ReadonlySet<number>): Promise<Map<number, number> | null> {
  const postmaster = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (!postmaster) return null;
  const result = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || exclude.has(pid)) continue;
    const found = await ticksOf(pid);
    if (found && (pid === postmaster || found.parent === postmaster)) result.set(pid, found.ticks);
  }
  return result;
}

export interface CpuReading {
  server: number | null;
  database: Map<number, number> | null;
}

/**
 * `exclude`: backends that are the bench's own (its wait-event sampler and statistics reader), whose work
 * is not the target's.
 */
export async function readCpu(serverPid: number | undefined, clusterDir: string | undefined, exclude: ReadonlySet<number> = new Set()): Promise<CpuReading> {
  const [server, database] = await Promise.all([
    serverPid === undefined ? null : ticksOf(serverPid),
    clusterDir === undefined ? null : clusterTicks(clusterDir, exclude),
  ]);
  return { server: server?.ticks ?? null, database };
}

/**
 * CPU milliseconds per request between two readings. A backend that started in between counts from zero; one
 * that exited in between is missing from the second reading and not counted (the pools here keep theirs open).
 */
export function cpuMsPerRequest(before: CpuReading, after: CpuReading, requests: number): { server: number | null; database: number | null } {
  const perRequest = (ticks: number) => (requests > 0 ? Math.round(((ticks * 1000) / TICKS_PER_SECOND / requests) * 1000) / 1000 : null);
  let database: number | null = null;
  if (before.database && after.database) {
    let ticks = 0;
    for (const [pid, now] of after.database) ticks += now - (before.database.get(pid) ?? 0);
    database = perRequest(ticks);
  }
  return { server: before.server === null || after.server === null ? null : perRequest(after.server - before.server), database };
}
