import { describe, expect, it } from '@jest/globals';
import { WriteBatcher } from '../../src/platform/db/write-batcher.js';

/** A write that stays in flight until the test lets it finish. */
function gatedWriter() {
  const batches: number[][] = [];
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  return {
    batches,
    write: async (items: number[]) => {
      batches.push(items);
      await gate;
    },
    release() {
      open();
      gate = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

describe('WriteBatcher', () => {
  it('writes what arrives while a write is in flight together in the next write', async () => {
    const writer = gatedWriter();
    const batcher = new WriteBatcher(writer.write);
    const first = batcher.add(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4].map((item) => batcher.add(item));
    writer.release();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    writer.release();
    await Promise.all(later);
    expect(writer.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('splits at maxBatch and refuses items beyond maxQueued while the rest are written', async () => {
    const writer = gatedWriter();
    const batcher = new WriteBatcher(writer.write, 2, 3);
    const accepted = [1, 2, 3].map((item) => batcher.add(item)); // exactly at the bound
    await expect(batcher.add(4)).rejects.toThrow(/more than 3 items/); // one above it
    await new Promise((resolve) => setImmediate(resolve));
    writer.release();
    await new Promise((resolve) => setImmediate(resolve));
    writer.release();
    await Promise.all(accepted);
    expect(writer.batches).toEqual([[1, 2], [3]]);
  });

  it('rejects the items of a failed write and goes on with the next', async () => {
    let calls = 0;
    const batcher = new WriteBatcher<number>(async () => {
      if (++calls === 1) throw new Error('connection lost');
    });
    await expect(batcher.add(1)).rejects.toThrow('connection lost');
    await expect(batcher.add(2)).resolves.toBeUndefined();
  });
});
