import type { Logger } from '../logger.js';

export interface BackgroundLoopOptions {
  name: string;
  /** One pass; answers whether it found a full batch (then the next pass follows at once). */
  pass: () => Promise<boolean>;
  /** How long the loop sleeps when nothing kicks it: the bound on how late work found only by polling is. */
  intervalMs: number;
  logger: Logger;
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
    this.running = this.runPasses().finally(() => {
      this.running = undefined;
      if (!this.stopped) this.timer = setTimeout(() => this.kick(), this.kicked ? 0 : this.options.intervalMs).unref();
      this.kicked = false;
    });
  }

  private async runPasses(): Promise<void> {
    try {
      do {
        this.kicked = false;
        while ((await this.options.pass()) && !this.stopped);
      } while (this.kicked && !this.stopped);
    } catch (error) {
      this.options.logger.warn({ err: error, loop: this.options.name }, 'background pass failed; retrying at the next interval');
    }
  }

  /** Stops scheduling passes and waits for the one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
