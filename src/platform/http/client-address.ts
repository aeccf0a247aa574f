import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';

/** TRUST_PROXY: no proxy, a number of proxy hops, or the proxies' addresses and ranges (config.ts). */
export type TrustProxySetting = false | number | readonly string[];

/** Whether the hop at `address` (0 = the socket's peer) is a proxy to believe about who sent the request. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * One trust rule for Fastify's `request.ip` and for the raw requests Fastify never sees (WebSocket
 * upgrades), so a client has the same address on every surface.
 */
export function proxyTrust(setting: TrustProxySetting): ProxyTrust {
  if (setting === false) return () => false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyAddr.compile([...setting]);
}

/** The client's address of a raw request: the socket's peer, or the forwarded address trusted proxies report. */
export function clientAddress(request: IncomingMessage, trust: ProxyTrust): string {
  if (!request.socket.remoteAddress) return 'unknown';
  return proxyAddr(request, trust);
}

/**
 * The key a client's budgets (rate limits, sockets) are counted under. IPv6 clients are counted by
 * their /64, which one subscriber usually holds whole, so changing addresses within it does not buy a
 * fresh budget; an IPv4 address written as IPv6 (`::ffff:192.0.2.1`) is the IPv4 address.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(':')}::/64`;
}
