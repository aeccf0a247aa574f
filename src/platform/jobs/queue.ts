import type { EntityManager } from '@mikro-orm/postgresql';
import { run, type Runner, type Task } from 'graphile-worker';
import type { Logger } from '../logger.js';
import { workerLogger } from './worker-logger.js';

export type TaskHandler = (payload: unknown) => Promise<void>;

export interface JobRunnerOptions {
  connectionString: string;
  tasks: Record<string, TaskHandler>;
  logger: Logger;
  concurrency?: number;
  /** How often jobs scheduled for later are looked for; new jobs arrive at once through LISTEN. */
  pollIntervalMs?: number;
}

/**
 * The PostgreSQL-backed job queue (graphile-worker). Every process runs a worker pool; a job is
 * taken by exactly one of them, so work is done once however many processes share the database.
 */
export async function startJobRunner(options: JobRunnerOptions): Promise<Runner> {
  const taskList: Record<string, Task> = Object.fromEntries(
    Object.entries(options.tasks).map(([name, handler]) => [name, (payload: unknown) => handler(payload)]),
  );
  return run({
    connectionString: options.connectionString,
    taskList,
    concurrency: options.concurrency ?? 5,
    pollInterval: options.pollIntervalMs ?? 500,
    noHandleSignals: true,
    logger: workerLogger(options.logger),
  });
}

export interface EnqueueOptions {
  runAt?: Date;
  /** At most one pending job per key; enqueueing again replaces it. */
  jobKey?: string;
  maxAttempts?: number;
}

/** Queues a job inside the caller's transaction: it exists only if the transaction commits. */
export async function enqueueJob(tx: EntityManager, task: string, payload: object, options: EnqueueOptions = {}): Promise<void> {
  await tx.execute(
    'select graphile_worker.add_job(?, ?::json, run_at => ?::timestamptz, job_key => ?, max_attempts => ?)',
    [task, JSON.stringify(payload), options.runAt ?? null, options.jobKey ?? null, options.maxAttempts ?? 25],
  );
}
