import { describe, expect, it } from '@jest/globals';
import { lazyContext } from '../../src/platform/graphql/lazy-context.js';

interface Base {
  requestId: string;
}

function contexts() {
  const built: string[] = [];
  const make = lazyContext<Base, { loaders: { for: string }; helpers: { also: string } }>({
    loaders: (base) => {
      built.push(`loaders of ${base.requestId}`);
      return { for: base.requestId };
    },
    helpers: (base) => {
      built.push(`helpers of ${base.requestId}`);
      return { also: base.requestId };
    },
  });
  return { make, built };
}

describe('lazyContext', () => {
  it('builds no slice for an operation that never reads one', () => {
    const { make, built } = contexts();
    const context = make({ requestId: 'r1' });
    expect(context.requestId).toBe('r1');
    expect(built).toEqual([]);
  });

  it('builds a slice on first read, from its own base, once, and the other slices not at all', () => {
    const { make, built } = contexts();
    const [first, second] = [make({ requestId: 'r1' }), make({ requestId: 'r2' })];
    const loaders = first.loaders;
    expect(first.loaders).toBe(loaders);
    expect(loaders).toEqual({ for: 'r1' });
    expect(second.loaders).toEqual({ for: 'r2' });
    expect(built).toEqual(['loaders of r1', 'loaders of r2']);
    expect(Object.keys(first)).toEqual(['requestId', 'loaders']);
  });

  it('is copied as Apollo copies a context (Object.assign onto the same prototype) after a slice was read: the copy has the same slice', () => {
    const { make, built } = contexts();
    const context = make({ requestId: 'r1' });
    const loaders = context.loaders;
    const copy = Object.assign(Object.create(Object.getPrototypeOf(context) as object) as typeof context, context);
    expect(copy.loaders).toBe(loaders);
    expect(copy.requestId).toBe('r1');
    expect(built).toEqual(['loaders of r1']);
    expect(copy.helpers).toEqual({ also: 'r1' });
  });
});
