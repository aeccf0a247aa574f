import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { guardedDispatcher, isPublicAddress, refusedTarget } from '../../src/platform/net/address-policy.js';
import { HostResolver } from '../../src/platform/net/host-resolver.js';
import { startDnsServer, type TestDnsServer } from '../factories/dns-server.js';
import { IPV4_OTHER_NON_GLOBAL, IPV4_SPECIAL_PURPOSE, IPV6_OTHER_NON_GLOBAL, IPV6_SPECIAL_PURPOSE, nonGlobalCases, samplesOf } from '../fixtures/iana-special-purpose.js';

const CASES = nonGlobalCases();
const PUBLIC = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:82b::200e', '64:ff9b::808:808'];

describe('the address policy: global unicast only', () => {
  it('covers every block of both IANA special-purpose registries that is not globally reachable', () => {
    const covered = new Set(CASES.map((testCase) => testCase.block.block));
    const notGlobal = [...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE, ...IPV4_OTHER_NON_GLOBAL, ...IPV6_OTHER_NON_GLOBAL].filter((block) => block.globallyReachable !== true);
    expect(notGlobal.filter((block) => !covered.has(block.block))).toEqual([]);
    // Three samples of most blocks, fourteen spellings of each IPv4 sample and four of each IPv6 one.
    expect(CASES.length).toBeGreaterThan(900);
  });

  it.each(CASES.map((testCase) => [testCase.title, testCase.spelling.address]))('refuses %s', (_title, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(CASES.map((testCase) => [testCase.title, testCase.spelling.host]))('refuses the URL host %s', async (_title, host) => {
    // IP literals never reach a name server; this one answers nothing.
    const resolver = new HostResolver({ servers: ['127.0.0.1:9'], timeoutMs: 200 });
    expect(await refusedTarget(new URL(`https://${host}:8443/hook`), false, resolver)).toMatch(/^resolves to a loopback, private, link-local or other non-public address \(/);
  });

  it.each(PUBLIC)('allows the public address %s', async (address) => {
    expect(isPublicAddress(address)).toBe(true);
    const resolver = new HostResolver({ servers: ['127.0.0.1:9'], timeoutMs: 200 });
    expect(await refusedTarget(new URL(`https://${address.includes(':') ? `[${address}]` : address}/hook`), false, resolver)).toBeUndefined();
  });

  it('reads a spelling as the URL parser does, not as a list of spellings', () => {
    expect(['0x5db8d822', '1572395042', '93.184.55330'].map(isPublicAddress)).toEqual([true, true, true]);
    // ipaddr.js alone reads `::127.0.0.1` as IPv4-mapped; a connection to it goes to ::7f00:1.
    expect(['::127.0.0.1', '::7f00:1', '0:0:0:0:0:0:127.0.0.1', '[::127.0.0.1]'].map(isPublicAddress)).toEqual([false, false, false, false]);
    expect(['example.com', '', 'fe80::1%eth0', '999.1.1.1'].map(isPublicAddress)).toEqual([false, false, false, false]);
  });
});

describe('the address policy at connect time (a name that resolves to a non-public address)', () => {
  let dns: TestDnsServer;
  let receiver: Server;
  let port: number;
  const names: Record<string, string> = {};
  // The first sample of every non-global block, as a name server would answer it (A or AAAA).
  const blocks = [...IPV4_SPECIAL_PURPOSE, ...IPV4_OTHER_NON_GLOBAL, ...IPV6_SPECIAL_PURPOSE, ...IPV6_OTHER_NON_GLOBAL].filter((block) => block.globallyReachable !== true);
  for (const [index, block] of blocks.entries()) names[`block-${index}.hooks.test`] = samplesOf(block.block)[0]!;

  beforeAll(async () => {
    dns = await startDnsServer({ ...names, 'loopback.hooks.test': '127.0.0.1' });
    receiver = createServer((_request, response) => response.end('ok')).listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await dns.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  const connect = async (host: string, allowPrivate: boolean) => {
    const resolver = new HostResolver({ servers: [dns.address], timeoutMs: 1000 });
    const dispatcher = guardedDispatcher(allowPrivate, resolver);
    try {
      const response = await request(`http://${host}:${port}/hook`, { dispatcher });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code;
    } finally {
      await dispatcher.close();
    }
  };

  it.each(Object.entries(names))('refuses to connect to %s (%s)', async (name) => {
    expect(await connect(name, false)).toBe('EADDRNOTALLOWED');
  });

  it('connects to the same kind of name when private addresses are allowed', async () => {
    expect(await connect('loopback.hooks.test', true)).toBe(200);
    expect(await connect('loopback.hooks.test', false)).toBe('EADDRNOTALLOWED');
  });
});
