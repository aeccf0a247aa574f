/**
 * Totals of a few named figures over the last `windowSeconds` (one bucket per second, so memory stays
 * constant however busy the process is): the status report's "what happened lately".
 */
export class RecentTotals<Name extends string> {
  private readonly buckets: { second: number; totals: Map<Name, number> }[];

  constructor(
    private readonly windowSeconds: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.buckets = Array.from({ length: windowSeconds }, () => ({ second: -1, totals: new Map() }));
  }

  add(name: Name, amount = 1): void {
    const second = Math.floor(this.now() / 1000);
    const bucket = this.buckets[second % this.windowSeconds]!;
    if (bucket.second !== second) {
      bucket.second = second;
      bucket.totals.clear();
    }
    bucket.totals.set(name, (bucket.totals.get(name) ?? 0) + amount);
  }

  total(name: Name): number {
    const oldest = Math.floor(this.now() / 1000) - this.windowSeconds + 1;
    let total = 0;
    for (const bucket of this.buckets) if (bucket.second >= oldest) total += bucket.totals.get(name) ?? 0;
    return total;
  }
}
