import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HostResolutionError, HostResolver } from '../../src/platform/net/host-resolver.js';
import { startDnsServer, type TestDnsServer } from '../factories/dns-server.js';

const TIMEOUT_MS = 400;

describe('HostResolver against a local name server', () => {
  let silent: TestDnsServer;
  let answering: TestDnsServer;
  beforeAll(async () => {
    silent = await startDnsServer();
    answering = await startDnsServer({ 'public.hooks.test': '93.184.216.34' });
  });
  afterAll(async () => {
    await silent.close();
    await answering.close();
  });

  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => (error instanceof HostResolutionError ? error.reason : error),
    );

  it('answers what the name server answers, and no such name when it has no record', async () => {
    const resolver = new HostResolver({ servers: [answering.address], timeoutMs: TIMEOUT_MS });
    expect(await resolver.resolve('public.hooks.test')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await failureOf(resolver.resolve('missing.hooks.test'))).toBe('not_found');
  });

  it('never asks the name server about IP literals or localhost', async () => {
    const resolver = new HostResolver({ servers: [silent.address], timeoutMs: TIMEOUT_MS });
    const before = silent.queries.length;
    expect(await resolver.resolve('10.1.2.3')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await resolver.resolve('[::1]')).toEqual([{ address: '::1', family: 6 }]);
    expect(await resolver.resolve('LOCALHOST')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(silent.queries.length).toBe(before);
  });

  it('gives up at the deadline, waiting for a place included, and refuses at once beyond the waiting bound', async () => {
    // Long enough that a loaded machine's timer lag (370 ms seen in CI) stays well below another deadline, which a
    // lookup that waited for its place and then took a deadline of its own would add.
    const DEADLINE_MS = 1_000;
    const resolver = new HostResolver({ servers: [silent.address], timeoutMs: DEADLINE_MS, maxConcurrent: 2, maxWaiting: 1 });
    const started = performance.now();
    const settled = (promise: Promise<unknown>) => failureOf(promise).then((reason) => ({ reason, ms: performance.now() - started }));
    // Two in flight and one waiting: just inside the bound.
    const inside = ['a', 'b', 'c'].map((name) => settled(resolver.resolve(`${name}.silent.test`)));
    // A fourth at once: just outside it.
    const outside = await settled(resolver.resolve('d.silent.test'));
    expect(outside.reason).toBe('busy');
    expect(outside.ms).toBeLessThan(50);

    await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS / 2));
    // Only the two lookups holding a place have sent queries.
    expect(new Set(silent.queries.filter((name) => name.endsWith('.silent.test')))).toEqual(new Set(['a.silent.test', 'b.silent.test']));

    const results = await Promise.all(inside);
    for (const { reason, ms } of results) {
      expect(reason).toBe('timeout');
      expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
      expect(ms).toBeLessThan(DEADLINE_MS * 1.6);
    }
    // The places are free again.
    expect(await failureOf(resolver.resolve('e.silent.test'))).toBe('timeout');
  });
});
