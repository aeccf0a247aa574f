import { describe, expect, it } from '@jest/globals';
import { BackgroundLoop } from '../../src/platform/jobs/background-loop.js';
import { createLogger } from '../../src/platform/logger.js';

const logger = createLogger('silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    await sleep(300);
    await loop.stop();
    // Back to back (about 1 ms each on an idle machine); a loaded one still runs many more than the paced test's 6.
    expect(starts.length).toBeGreaterThan(10);
  });

  it('while the process is busy, starts passes at most every everyMs, however often it is kicked, and at once when it is not', async () => {
    let busy = true;
    const { loop, starts } = saturatedLoop({ busy: () => busy, everyMs: 100 });
    const kicks = setInterval(() => loop.kick(), 5);
    try {
      loop.start();
      await sleep(550);
      const whileBusy = starts.length;
      // One at the start, then one per 100 ms: never two within less than the pace.
      expect(whileBusy).toBeGreaterThanOrEqual(4);
      expect(whileBusy).toBeLessThanOrEqual(6);
      const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(99);

      busy = false;
      await sleep(300);
      expect(starts.length - whileBusy).toBeGreaterThan(10);
    } finally {
      clearInterval(kicks);
      await loop.stop();
    }
  });
});
