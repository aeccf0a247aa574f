/**
 * Counts of a few named outcomes over the last `windowSeconds` (one bucket per second, so memory
 * stays constant however many events there are), for the status report's "what happened lately".
 */
export class RecentCounts<Outcome extends string> {
  private readonly buckets: { second: number; counts: Map<Outcome, number> }[];

  constructor(
    private readonly windowSeconds: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.buckets = Array.from({ length: windowSeconds }, () => ({ second: -1, counts: new Map() }));
  }

  add(outcome: Outcome): void {
    const second = Math.floor(this.now() / 1000);
    const bucket = this.buckets[second % this.windowSeconds]!;
    if (bucket.second !== second) {
      bucket.second = second;
      bucket.counts.clear();
    }
    bucket.counts.set(outcome, (bucket.counts.get(outcome) ?? 0) + 1);
  }

  count(outcome: Outcome): number {
    const oldest = Math.floor(this.now() / 1000) - this.windowSeconds + 1;
    let total = 0;
    for (const bucket of this.buckets) if (bucket.second >= oldest) total += bucket.counts.get(outcome) ?? 0;
    return total;
  }
}
