import { describe, expect, it } from '@jest/globals';
import { BackgroundLoop } from '../../src/platform/jobs/background-loop.js';
import { createLogger } from '../../src/platform/logger.js';

const logger = createLogger('silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds; fails after 10 s. */
async function until(done: () => boolean): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!done()) {
    if (performance.now() > deadline) throw new Error('the loop did not get there within 10 s');
    await sleep(5);
  }
}

/** A loop whose passes always find a full batch (more work at once), recording when each started. */
function saturatedLoop(whileBusy?: { busy: () => boolean; everyMs: number }) {
  const starts: number[] = [];
  const loop = new BackgroundLoop({
    name: 'test',
    intervalMs: 60_000,
    logger,
    pass: async () => {
      starts.push(performance.now());
      await sleep(1);
      return true;
    },
    ...(whileBusy ? { whileBusy } : {}),
  });
  return { loop, starts };
}

describe('a background loop', () => {
  it('runs pass after pass while each finds a full batch', async () => {
    const { loop, starts } = saturatedLoop();
    loop.start();
    try {
      await until(() => starts.length >= 11);
    } finally {
      await loop.stop();
    }
    // Back to back (about 1 ms each), not at the 60 s interval: most gaps are a pass's own millisecond or so.
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!).sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeLessThan(50);
  });

  it('while the process is busy, starts passes at most every everyMs, however often it is kicked, and at once when it is not', async () => {
    let busy = true;
    const { loop, starts } = saturatedLoop({ busy: () => busy, everyMs: 100 });
    const kicks = setInterval(() => loop.kick(), 5);
    try {
      loop.start();
      // A loaded machine fires timers late, never early: wait for the passes instead of counting them in a fixed time.
      await until(() => starts.length >= 5);
      const busyPasses = starts.slice();
      const gaps = busyPasses.slice(1).map((at, i) => at - busyPasses[i]!);
      // Kicked every 5 ms and always finding a full batch, it still never starts two within less than the pace.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(99);

      busy = false;
      const unpacedFrom = starts.length;
      await until(() => starts.length >= unpacedFrom + 10);
      const unpaced = starts.slice(unpacedFrom - 1);
      const unpacedGaps = unpaced.slice(1).map((at, i) => at - unpaced[i]!);
      // No longer paced: passes follow one another at once (about 1 ms each), far inside the 100 ms pace.
      expect(Math.min(...unpacedGaps)).toBeLessThan(50);
      expect(unpacedGaps.filter((gap) => gap < 99).length).toBeGreaterThanOrEqual(5);
    } finally {
      clearInterval(kicks);
      await loop.stop();
    }
  });
});
