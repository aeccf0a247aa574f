import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';

/** The logger every part receives: pino, typed as Fastify sees it so request loggers fit too. */
export type Logger = FastifyBaseLogger;

/** One-time tokens travel in query strings (`/browse?token=…`): they are cut from logged URLs. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

/** The process logger. Secrets never reach it: credential headers and URL tokens are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    serializers: {
      req: (request: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: request.method,
        url: redactUrl(request.url ?? ''),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort,
      }),
    },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
      censor: '[redacted]',
    },
  });
}
