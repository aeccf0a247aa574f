import { Logger as WorkerLogger, type LogLevel } from 'graphile-worker';
import type { Logger } from '../logger.js';

const LEVELS: Record<LogLevel, 'error' | 'warn' | 'info' | 'debug'> = { error: 'error', warning: 'warn', info: 'info', debug: 'debug' };

/** graphile-worker's logger, writing to pino. */
export function workerLogger(logger: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    logger[LEVELS[level]]({ component: 'jobs', ...scope, ...(meta ?? {}) }, message);
  });
}

export const silentWorkerLogger = new WorkerLogger(() => () => {});
