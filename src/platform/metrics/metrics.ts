import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Gauge, Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from './families.js';

/** Request latency buckets in seconds: 5 ms up to 10 s (the statement timeout's order). */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Sets one value of a gauge while it is scraped. */
export type GaugeSetter = (value: number, labels?: Record<string, string>) => void;

/**
 * The process's Prometheus metrics: one registry per app (tests build several in one process), with
 * counters and histograms whose series callers keep (families.ts) and gauges read only when scraped.
 */
export class Metrics {
  readonly registry = new Registry();

  counter(name: string, help: string, labelNames: readonly string[]): CounterFamily {
    return new CounterFamily(this.registry, name, help, labelNames);
  }

  histogram(name: string, help: string, labelNames: readonly string[], upperBounds: readonly number[] = LATENCY_BUCKETS_SECONDS): HistogramFamily {
    return new HistogramFamily(this.registry, name, help, labelNames, upperBounds);
  }

  /** A gauge whose values `read` produces at scrape time; nothing runs between scrapes. */
  gauge(name: string, help: string, labelNames: readonly string[], read: (set: GaugeSetter) => Promise<void> | void): void {
    this.registry.registerMetric(
      new Gauge({
        name,
        help,
        labelNames,
        registers: [],
        async collect() {
          this.reset();
          await read((value, labels) => (labels ? this.set(labels, value) : this.set(value)));
        },
      }),
    );
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/**
 * `GET /metrics` in the Prometheus text format, behind `Authorization: Bearer <token>`. Without a
 * token configured the route does not exist (404): request volumes per route and operation names
 * are not for the public. A missing or wrong token is a 401.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  if (token === undefined) return;
  const expected = sha256(`Bearer ${token}`);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const presented = request.headers.authorization;
    // Digests of equal length, compared in constant time: the token's length and prefix stay secret.
    if (presented === undefined || !timingSafeEqual(sha256(presented), expected)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'unauthorized', message: 'metrics need Authorization: Bearer <METRICS_TOKEN>' });
    }
    const body = await metrics.render();
    return reply.type(metrics.registry.contentType).send(body);
  });
}
