import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';

/** The logger every part receives: pino, typed as Fastify sees it so request loggers fit too. */
export type Logger = FastifyBaseLogger;

/** The process logger. Secrets never reach it: credential headers are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
      censor: '[redacted]',
    },
  });
}
