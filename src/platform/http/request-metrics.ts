import type { FastifyInstance } from 'fastify';

const WINDOW_SECONDS = 300;

interface Bucket {
  second: number;
  count: number;
  totalMs: number;
  errors5xx: number;
}

export interface RequestSummary {
  total: number;
  avgResponseMs: number;
  errors5xx: number;
}

/**
 * The server's own request accounting: one bucket per second for the last five minutes, so memory
 * stays constant however busy the process is.
 */
export class RequestMetrics {
  private readonly buckets: Bucket[] = Array.from({ length: WINDOW_SECONDS }, () => ({ second: -1, count: 0, totalMs: 0, errors5xx: 0 }));

  constructor(private readonly now: () => number = () => Date.now()) {}

  record(durationMs: number, statusCode: number): void {
    const second = Math.floor(this.now() / 1000);
    const bucket = this.buckets[second % WINDOW_SECONDS]!;
    if (bucket.second !== second) Object.assign(bucket, { second, count: 0, totalMs: 0, errors5xx: 0 });
    bucket.count++;
    bucket.totalMs += durationMs;
    if (statusCode >= 500) bucket.errors5xx++;
  }

  lastFiveMinutes(): RequestSummary {
    const oldest = Math.floor(this.now() / 1000) - WINDOW_SECONDS + 1;
    let total = 0;
    let totalMs = 0;
    let errors5xx = 0;
    for (const bucket of this.buckets) {
      if (bucket.second < oldest) continue;
      total += bucket.count;
      totalMs += bucket.totalMs;
      errors5xx += bucket.errors5xx;
    }
    return { total, avgResponseMs: total ? Math.round((totalMs / total) * 100) / 100 : 0, errors5xx };
  }

  install(app: FastifyInstance): void {
    app.addHook('onResponse', async (_request, reply) => {
      this.record(reply.elapsedTime, reply.statusCode);
    });
  }
}
