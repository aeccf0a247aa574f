import type { FastifyInstance } from 'fastify';
import type { HistogramFamily, HistogramSeries } from '../metrics/families.js';
import type { Metrics } from '../metrics/metrics.js';

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

/** The route label of a request no route matched: the raw URL would be a label per scanner probe. */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The server's own request accounting, the one record of every answered request: the status
 * report's last five minutes (one bucket per second, so memory stays constant however busy the
 * process is) and the Prometheus histogram `gateway_http_request_duration_seconds` by route pattern,
 * method and status are both written here, by the same call.
 */
export class RequestMetrics {
  private readonly buckets: Bucket[] = Array.from({ length: WINDOW_SECONDS }, () => ({ second: -1, count: 0, totalMs: 0, errors5xx: 0 }));
  private readonly durations: HistogramFamily;
  // route → method → status: three map lookups per request and no label string built.
  private readonly seriesByRoute = new Map<string, Map<string, Map<number, HistogramSeries>>>();

  constructor(
    metrics: Metrics,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.durations = metrics.histogram(
      'gateway_http_request_duration_seconds',
      'HTTP requests by route pattern, method and status: latency from arrival to the answer (the _count is the request count)',
      ['route', 'method', 'status'],
    );
  }

  record(route: string, method: string, statusCode: number, durationMs: number): void {
    this.seriesFor(route, method, statusCode).observe(durationMs / 1000);
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
    app.addHook('onResponse', async (request, reply) => {
      // The route's pattern (`/api/bookings/:id`), never the URL: one series per route, not per id.
      this.record(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime);
    });
  }

  private seriesFor(route: string, method: string, statusCode: number): HistogramSeries {
    let byMethod = this.seriesByRoute.get(route);
    if (!byMethod) this.seriesByRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(statusCode);
    if (!series) byStatus.set(statusCode, (series = this.durations.series({ route, method, status: String(statusCode) })));
    return series;
  }
}
