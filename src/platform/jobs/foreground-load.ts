/** Requests arriving in one window (50 a second) at or above which the process counts as busy. */
const BUSY_ARRIVALS = 25;
const WINDOW_MS = 500;

/**
 * Whether this process is busy serving requests: 25 or more arrived in the last half second. Background
 * work reads it to yield to requests, whose answers would otherwise wait for it (for the CPU, or for the
 * database both use). Counted by arrivals, not by how busy the event loop is: creates mostly wait on the
 * database, which leaves the loop idle while the requests queue, and the background work's own load must
 * not hold that work back once the requests are gone.
 */
export class ForegroundLoad {
  private arrivals = 0;
  private busyNow = false;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => {
      this.busyNow = this.arrivals >= BUSY_ARRIVALS;
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
