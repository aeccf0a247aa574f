import type { Metric } from 'prom-client';

type LabelValues = Readonly<Record<string, string>>;

interface ExportedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/**
 * What prom-client's Registry reads from a metric: it renders `get()` into the text format. The
 * families below keep their numbers in plain fields so that recording allocates nothing; the
 * Registry only sees them when scraped.
 */
abstract class ExportedFamily {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
  ) {}

  readonly aggregator = 'sum';

  protected abstract values(): ExportedValue[];

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  /** Called by `Registry.resetMetrics()`; these families are never reset. */
  reset(): void {}

  /** The shape prom-client's `registerMetric` is typed for; it only calls `get()` and reads `name`. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}

/** One labelled series of a counter; keep the reference and `inc()` it. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: LabelValues) {}
  inc(by = 1): void {
    this.value += by;
  }
}

/**
 * A counter family whose series are created once per label set and then held by the caller, so a
 * hot path increments a number instead of hashing its labels on every call (as prom-client's
 * `labels(...).inc()` does).
 */
export class CounterFamily extends ExportedFamily {
  private readonly all: CounterSeries[] = [];

  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  /** A new series; call once per label set and keep it. */
  series(labels: LabelValues): CounterSeries {
    const series = new CounterSeries(labels);
    this.all.push(series);
    return series;
  }

  protected values(): ExportedValue[] {
    return this.all.map((series) => ({ value: series.value, labels: { ...series.labels } }));
  }
}

/** One labelled series of a histogram: a count per bucket, the sum and the count. */
export class HistogramSeries {
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: LabelValues,
    private readonly upperBounds: readonly number[],
  ) {
    this.buckets = new Float64Array(upperBounds.length);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    const bounds = this.upperBounds;
    for (let index = 0; index < bounds.length; index++) {
      if (value <= bounds[index]!) {
        this.buckets[index]!++;
        return;
      }
    }
  }
}

/** A histogram family with series held by the caller (see CounterFamily). */
export class HistogramFamily extends ExportedFamily {
  private readonly all: HistogramSeries[] = [];

  constructor(
    name: string,
    help: string,
    private readonly upperBounds: readonly number[],
  ) {
    super(name, help, 'histogram');
  }

  series(labels: LabelValues): HistogramSeries {
    const series = new HistogramSeries(labels, this.upperBounds);
    this.all.push(series);
    return series;
  }

  protected values(): ExportedValue[] {
    const values: ExportedValue[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, index) => {
        cumulative += series.buckets[index]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...series.labels, le: bound }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...series.labels, le: '+Inf' }, value: series.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...series.labels }, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...series.labels }, value: series.count });
    }
    return values;
  }
}
