import { run, type Runner, type Task } from 'graphile-worker';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { workerLogger } from './worker-logger.js';
import { closeSilentConnections, connectionSettings, type DatabaseTimeouts } from '../db/timeouts.js';

export type TaskHandler = (payload: unknown) => Promise<void>;

export interface JobRunnerOptions {
  connectionString: string;
  timeouts: DatabaseTimeouts;
  tasks: Record<string, TaskHandler>;
  logger: Logger;
  concurrency?: number;
  /** How often jobs scheduled for later are looked for; new jobs arrive at once through LISTEN. */
  pollIntervalMs?: number;
  /** graphile-worker crontab lines for recurring jobs (each fires once across all processes). */
  crontab?: string;
}

/**
 * The PostgreSQL-backed job queue (graphile-worker). Every process runs a worker pool; a job is
 * taken by exactly one of them, so work is done once however many processes share the database.
 */
export async function startJobRunner(options: JobRunnerOptions): Promise<JobRunner> {
  const taskList: Record<string, Task> = Object.fromEntries(
    Object.entries(options.tasks).map(([name, handler]) => [name, (payload: unknown) => handler(payload)]),
  );
  const concurrency = options.concurrency ?? 5;
  // Our own pool, ended only after the worker has stopped: a connection dropped while the process
  // shuts down is then logged rather than an unhandled 'error' event.
  const pool = new pg.Pool({ ...connectionSettings(options.timeouts), connectionString: options.connectionString, max: concurrency + 2 });
  closeSilentConnections(pool);
  // 57P01: the server is shutting down (our own stop, or a database restart the pool recovers from).
  const lost = (error: Error & { code?: string }) =>
    options.logger[error.code === '57P01' ? 'debug' : 'warn']({ err: error, component: 'jobs' }, 'job queue connection lost');
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
  const runner: Runner = await run({
    pgPool: pool,
    taskList,
    concurrency,
    pollInterval: options.pollIntervalMs ?? 500,
    noHandleSignals: true,
    logger: workerLogger(options.logger),
    crontab: options.crontab ?? '',
    // graphile-worker's default (-1) records a finished job's outcome without awaiting it, so
    // `runner.stop()` could resolve while that write still waited for a connection and our
    // `pool.end()` then left it to time out unhandled. A batcher (even with no delay) is awaited
    // by the shutdown, so every outcome is written before the pool closes.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  return {
    async stop() {
      await runner.stop();
      await pool.end();
    },
  };
}

export interface JobRunner {
  /** Finishes running jobs, stops taking new ones and closes the queue's connections. */
  stop(): Promise<void>;
}
