import { Counter, Histogram, type Registry } from 'prom-client';

type LabelValues = Readonly<Record<string, string>>;

/** One labelled series of a counter: look it up once per label set and keep it. */
export interface CounterSeries {
  inc(by?: number): void;
}

/** One labelled series of a histogram: look it up once per label set and keep it. */
export interface HistogramSeries {
  observe(value: number): void;
}

/**
 * A prom-client counter whose callers hold their series (prom-client's labelled child) instead of
 * passing label objects on every increment: hot paths keep one object per label set in a map.
 */
export class CounterFamily {
  private readonly counter: Counter<string>;

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    this.counter = new Counter({ name, help, labelNames, registers: [registry] });
  }

  series(labels: LabelValues): CounterSeries {
    return this.counter.labels({ ...labels });
  }
}

/** A prom-client histogram with series held by the caller (see CounterFamily). */
export class HistogramFamily {
  private readonly histogram: Histogram<string>;

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[], upperBounds: readonly number[]) {
    this.histogram = new Histogram({ name, help, labelNames, buckets: [...upperBounds], registers: [registry] });
  }

  series(labels: LabelValues): HistogramSeries {
    return this.histogram.labels({ ...labels });
  }
}
