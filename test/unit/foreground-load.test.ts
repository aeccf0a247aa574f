import { describe, expect, it } from '@jest/globals';
import { ForegroundLoad } from '../../src/platform/jobs/foreground-load.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `perWindow` requests arriving evenly over `windows` half-second windows. */
async function arrive(load: ForegroundLoad, perWindow: number, windows: number) {
  for (let step = 0; step < windows * 10; step++) {
    for (let n = 0; n < perWindow / 10; n++) load.arrived();
    await sleep(50);
  }
}

describe('the foreground load', () => {
  it('is busy while 25 or more requests arrive in half a second, and not once they stop', async () => {
    const load = new ForegroundLoad();
    try {
      expect(load.busy()).toBe(false);
      await arrive(load, 100, 2.2); // with room for a slow machine stretching the sleeps
      expect(load.busy()).toBe(true);
      await sleep(1_100);
      expect(load.busy()).toBe(false);
    } finally {
      load.stop();
    }
  });

  it('is not busy with fewer requests than that', async () => {
    const load = new ForegroundLoad();
    try {
      await arrive(load, 20, 2.2); // a slow machine only spreads them thinner
      expect(load.busy()).toBe(false);
    } finally {
      load.stop();
    }
  });
});
