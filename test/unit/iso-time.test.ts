import { describe, expect, it } from '@jest/globals';
import { toIsoString } from '../../src/platform/iso-time.js';

describe('toIsoString', () => {
  it('equals Date#toISOString across the whole representable range', () => {
    const samples = [
      0, 1, -1, Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(2000, 1, 29), Date.UTC(2030, 2, 4, 8, 5, 9, 7), Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1), Date.UTC(0, 0, 1) - 1, Date.UTC(-1, 5, 6), -8.64e15, 8.64e15, Date.UTC(12, 0, 1) - Date.UTC(1912, 0, 1) + Date.UTC(12, 0, 1),
    ];
    for (let i = 0; i < 2000; i++) samples.push(Math.round((Math.random() * 2 - 1) * 8.64e15));
    for (const time of samples) expect(toIsoString(new Date(time))).toBe(new Date(time).toISOString());
  });

  it('throws like the built-in for an invalid date', () => {
    expect(() => toIsoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});
