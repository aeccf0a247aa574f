import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** A window's utilization above which the loop counts as busy, */
const BUSY_UTILIZATION = 0.5;
/** ... with at least this many requests arriving in it (50 a second): the loop's own background work alone is not a load to yield to. */
const BUSY_ARRIVALS = 25;
const WINDOW_MS = 500;

/**
 * Whether this process is busy serving requests, over the last half second: its event loop ran more than
 * half of the time (JavaScript, and the system calls it waits in), and requests kept arriving. Background
 * work reads it to yield to requests: a loop that is busy now makes every request that arrives wait for it.
 * Arrivals tell requests from the background work's own load, which must not slow that work down once the
 * requests are gone.
 */
export class ForegroundLoad {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private arrivals = 0;
  private busyNow = false;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const utilization = performance.eventLoopUtilization(now, this.last).utilization;
      this.busyNow = utilization > BUSY_UTILIZATION && this.arrivals >= BUSY_ARRIVALS;
      this.last = now;
      this.arrivals = 0;
    }, WINDOW_MS).unref();
  }

  /** Counts a request as it arrives. */
  arrived(): void {
    this.arrivals++;
  }

  busy(): boolean {
    return this.busyNow;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
