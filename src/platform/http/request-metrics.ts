import type { FastifyInstance } from 'fastify';
import type { HistogramFamily, HistogramSeries } from '../metrics/families.js';
import type { Metrics } from '../metrics/metrics.js';
import { RecentTotals } from '../metrics/recent-totals.js';

const WINDOW_SECONDS = 300;

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
  private readonly recent: RecentTotals<'requests' | 'responseMs' | 'errors5xx'>;
  private readonly durations: HistogramFamily;
  // route → method → status: three map lookups find the series kept for this label set.
  private readonly seriesByRoute = new Map<string, Map<string, Map<number, HistogramSeries>>>();

  constructor(metrics: Metrics, now: () => number = () => Date.now()) {
    this.recent = new RecentTotals(WINDOW_SECONDS, now);
    this.durations = metrics.histogram(
      'gateway_http_request_duration_seconds',
      'HTTP requests by route pattern, method and status: latency from arrival to the answer (the _count is the request count)',
      ['route', 'method', 'status'],
    );
  }

  record(route: string, method: string, statusCode: number, durationMs: number): void {
    this.seriesFor(route, method, statusCode).observe(durationMs / 1000);
    this.recent.add('requests');
    this.recent.add('responseMs', durationMs);
    if (statusCode >= 500) this.recent.add('errors5xx');
  }

  lastFiveMinutes(): RequestSummary {
    const total = this.recent.total('requests');
    const totalMs = this.recent.total('responseMs');
    return { total, avgResponseMs: total ? Math.round((totalMs / total) * 100) / 100 : 0, errors5xx: this.recent.total('errors5xx') };
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
