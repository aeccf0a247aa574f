import { describe, expect, it } from '@jest/globals';
import { ForegroundLoad } from '../../src/platform/jobs/foreground-load.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps the event loop running (as request handling would) for `ms`, with `arrivals` requests spread over it. */
async function work(load: ForegroundLoad, ms: number, arrivals: number) {
  const until = performance.now() + ms;
  let arrived = 0;
  while (performance.now() < until) {
    const slice = performance.now() + 5;
    while (performance.now() < slice); // busy for 5 ms, then let the timers run
    if (arrived < arrivals) {
      load.arrived();
      arrived++;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('the foreground load', () => {
  it('is busy while the loop runs most of the time and requests keep arriving, and not once they stop', async () => {
    const load = new ForegroundLoad();
    try {
      expect(load.busy()).toBe(false);
      await work(load, 1_100, 200);
      expect(load.busy()).toBe(true);
      await sleep(1_100);
      expect(load.busy()).toBe(false);
    } finally {
      load.stop();
    }
  });

  it('is not busy with the loop’s own work when few requests arrive (background work does not hold itself back)', async () => {
    const load = new ForegroundLoad();
    try {
      await work(load, 1_100, 10);
      expect(load.busy()).toBe(false);
    } finally {
      load.stop();
    }
  });

  it('is not busy with many requests on an idle loop', async () => {
    const load = new ForegroundLoad();
    try {
      for (let i = 0; i < 22; i++) {
        for (let n = 0; n < 10; n++) load.arrived();
        await sleep(50);
      }
      expect(load.busy()).toBe(false);
    } finally {
      load.stop();
    }
  });
});
