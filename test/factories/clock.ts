import type { Clock } from '../../src/platform/clock.js';

/** A clock the test sets; business time for the app under test. */
export class TestClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at);
  }
}
