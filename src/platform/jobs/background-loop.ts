import type { Logger } from '../logger.js';

export interface BackgroundLoopOptions {
  name: string;
  /** One pass; answers whether it found a full batch (then the next pass follows at once). */
  pass: () => Promise<boolean>;
  /** How long the loop sleeps when nothing kicks it: the bound on how late work found only by polling is. */
  intervalMs: number;
  logger: Logger;
  /**
   * Foreground work first: while `busy()` answers true, passes start at most every `everyMs` (kicks and full
   * batches wait for the next turn instead of running at once), so the work goes on at a bounded pace.
   */
  whileBusy?: { busy: () => boolean; everyMs: number };
}

/**
 * Work that polls the database on an interval and can be woken early (`kick`) by the process that
 * just created work for it. Passes never overlap; a kick during a pass runs one more pass after it.
 * A failing pass is logged and retried at the next interval.
 */
export class BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private kicked = false;
  private stopped = true;
  private lastPassAt = -Infinity;

  constructor(private readonly options: BackgroundLoopOptions) {}

  start(): void {
    this.stopped = false;
    this.kick();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.kicked = true;
      return;
    }
    clearTimeout(this.timer);
    const wait = this.untilNextTurn();
    if (wait > 0) {
      this.timer = setTimeout(() => this.kick(), wait).unref();
      return;
    }
    // runPasses logs its failures; a logger that throws must not leave the loop stuck as running.
    this.running = this.runPasses().catch(() => false).then((pending) => {
      this.running = undefined;
      if (!this.stopped) this.timer = setTimeout(() => this.kick(), pending || this.kicked ? this.untilNextTurn() : this.options.intervalMs).unref();
      this.kicked = false;
    });
  }

  /** Answers whether work is left for a pass that had to wait for its turn. */
  private async runPasses(): Promise<boolean> {
    try {
      do {
        this.kicked = false;
        let more: boolean;
        do {
          this.lastPassAt = performance.now();
          more = await this.options.pass();
        } while (more && !this.stopped && this.untilNextTurn() === 0);
        if (more) return true;
      } while (this.kicked && !this.stopped && this.untilNextTurn() === 0);
    } catch (error) {
      this.options.logger.warn({ err: error, loop: this.options.name }, 'background pass failed; retrying at the next interval');
    }
    return false;
  }

  /** How long the next pass must wait: 0 unless the process is busy and the last pass started less than `everyMs` ago. */
  private untilNextTurn(): number {
    const pace = this.options.whileBusy;
    if (!pace || !pace.busy()) return 0;
    return Math.max(0, Math.ceil(this.lastPassAt + pace.everyMs - performance.now()));
  }

  /** Stops scheduling passes and waits for the one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
