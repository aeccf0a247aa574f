/**
 * Writes items many at a time: while one write is in flight, new items wait and leave together in
 * the next. Each round trip to PostgreSQL costs far more than a row, so under load a burst of N
 * items costs a couple of statements instead of N; when idle an item leaves at once. The write that
 * carries an item starts after the item was added; every item of a batch gets the batch's result.
 */
export class WriteBatcher<Item, Result = void> {
  private queue: { item: Item; settle: (error: unknown, result?: Result) => void }[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly write: (items: Item[]) => Promise<Result>,
    private readonly maxBatch = 500,
    /** Items allowed to wait; past it `add` refuses at once (a stalled connection must not fill memory). */
    private readonly maxQueued = 20_000,
  ) {}

  /** Resolves once the item is written, with the write's result; rejects with the error of the write that carried it. */
  add(item: Item): Promise<Result> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(new Error(`more than ${this.maxQueued} items are waiting to be written`));
    const written = new Promise<Result>((resolve, reject) => this.queue.push({ item, settle: (error, result) => (error === undefined ? resolve(result as Result) : reject(error)) }));
    this.writing ??= this.drain();
    return written;
  }

  /** Waits until everything added so far is written (or failed). */
  async flush(): Promise<void> {
    await this.writing;
  }

  private async drain(): Promise<void> {
    // Items added in the same tick as the first one leave with it.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const result = await this.write(batch.map((entry) => entry.item));
        for (const entry of batch) entry.settle(undefined, result);
      } catch (error) {
        for (const entry of batch) entry.settle(error ?? new Error('write failed'));
      }
    }
    this.writing = undefined;
  }
}
