import { describe, expect, it } from '@jest/globals';
import { replicaLagMs, type PrimarySample } from '../../src/platform/db/replicas.js';
import { formatWalPosition, laterWalPosition, parseWalPosition } from '../../src/platform/db/wal-position.js';

describe('WAL positions', () => {
  it('reads and prints them as PostgreSQL does, comparing by byte offset', () => {
    expect(parseWalPosition('0/16B3748')).toBe(0x16b3748n);
    expect(parseWalPosition('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatWalPosition((0x16n << 32n) | 0xb374d848n)).toBe('16/B374D848');
    expect(formatWalPosition(0n)).toBe('0/0');
    // Not a string comparison: 1/0 is past 0/FFFFFFFF.
    expect(parseWalPosition('1/0')! > parseWalPosition('0/FFFFFFFF')!).toBe(true);
    expect(laterWalPosition(parseWalPosition('0/10'), parseWalPosition('0/9'))).toBe(0x10n);
    expect(laterWalPosition(undefined, 5n)).toBe(5n);
    expect(laterWalPosition(undefined, undefined)).toBeUndefined();
  });

  it.each(['', '0', '0/', '/0', '0/0/0', '0/123456789', 'G/0', ' 0/1', '0x1/2', '-1/0'])('refuses %p', (text) => {
    expect(parseWalPosition(text)).toBeUndefined();
  });
});

describe('replica lag', () => {
  // The primary sampled every 100 ms: at 1,000 ms it was at 100, at 1,100 at 200, …
  const samples: PrimarySample[] = [0, 1, 2, 3, 4].map((i) => ({ at: 1_000 + 100 * i, position: BigInt(100 + 100 * i) }));

  it('is the time since the primary last had nothing the replica lacks', () => {
    expect(replicaLagMs(samples, 300n, 1_450)).toBe(250); // had 300 at 1,200
    expect(replicaLagMs(samples, 299n, 1_450)).toBe(350); // had ≤ 299 at 1,100
  });

  it('stays near 0 for a replica that has everything, however long ago the primary last wrote', () => {
    const idle: PrimarySample[] = [0, 1, 2].map((i) => ({ at: 1_000 + 100 * i, position: 500n }));
    expect(replicaLagMs(idle, 500n, 1_230)).toBe(30);
    expect(replicaLagMs(samples, 10_000n, 1_400)).toBe(0);
  });

  it('is at least as old as the oldest sample for a replica behind every sample', () => {
    expect(replicaLagMs(samples, 50n, 2_000)).toBe(1_000);
    expect(replicaLagMs([], 50n, 2_000)).toBe(0);
  });
});
