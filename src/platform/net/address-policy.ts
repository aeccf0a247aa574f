import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, type Dispatcher } from 'undici';
import { HostResolutionError, type HostResolver } from './host-resolver.js';

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * An address as the WHATWG URL parser reads a host (the parser undici and fetch use), so that every
 * spelling means what a connection to it would reach: `0x7f.1` and `2130706433` are 127.0.0.1,
 * `[0:0:0:0:0:0:127.0.0.1]` is `::7f00:1`. ipaddr.js is given only that canonical form: it would read
 * `::127.0.0.1` as the IPv4-mapped `::ffff:127.0.0.1`, another address. Not an IP address: undefined.
 */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.replace(/^\[|\]$/g, '');
  let host: string;
  try {
    host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
  return isIP(host) === 0 ? undefined : ipaddr.parse(host);
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function lastIPv4Of(address: ipaddr.IPv6): ipaddr.IPv4 {
  const [high, low] = address.parts.slice(6) as [number, number];
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * Whether the gateway may connect to an address that a user gave it (webhooks): global unicast only,
 * refused by default. ipaddr.js names the blocks of IANA's IPv4 and IPv6 special-purpose registries,
 * multicast and broadcast; an IPv4 address in any of them is refused. An IPv6 address must lie in
 * 2000::/3 (global unicast) outside every named block, so IPv4-mapped and IPv4-compatible addresses,
 * the rest of ::/8 and 100::/8, unique-local, link- and site-local, multicast, 6to4, Teredo,
 * documentation, benchmarking, ORCHID and SRv6 are refused whatever they carry. The one exception is
 * NAT64's well-known prefix 64:ff9b::/96 (globally reachable in the registry; RFC 6052 allows only
 * global IPv4 addresses in it), judged by the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.match(NAT64_WELL_KNOWN)) return lastIPv4Of(v6).range() === 'unicast';
  return v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast';
}

/**
 * Why a URL may not be called, or undefined when it may. Resolves the host name within the
 * resolver's deadline; a lookup refused because too many are in progress is thrown, not an answer
 * about the URL.
 */
export async function refusedTarget(url: URL, allowPrivate: boolean, resolver: HostResolver): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string }[];
  try {
    addresses = await resolver.resolve(host);
  } catch (error) {
    if (error instanceof HostResolutionError && error.reason !== 'busy') return error.message;
    throw error;
  }
  const privateOne = addresses.find(({ address }) => !isPublicAddress(address));
  return privateOne ? `resolves to a loopback, private, link-local or other non-public address (${privateOne.address})` : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * An HTTP dispatcher whose host-name lookups go through the resolver (a deadline, bounded in number)
 * and, unless private addresses are allowed, that checks every address it connects to, so a host
 * that resolves to a public address at registration and to a private one later (DNS rebinding) is
 * still refused.
 */
export function guardedDispatcher(allowPrivate: boolean, resolver: HostResolver): Dispatcher {
  return new Agent({
    connect: {
      lookup: (hostname: string, options: object, callback: LookupCallback) => {
        const { all, family } = options as { all?: boolean; family?: number };
        resolver.resolve(hostname).then(
          (resolved) => {
            const addresses = family === 4 || family === 6 ? resolved.filter((entry) => entry.family === family) : resolved;
            if (addresses.length === 0) return callback(Object.assign(new Error(`host ${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), []);
            const refused = allowPrivate ? undefined : addresses.find(({ address }) => !isPublicAddress(address));
            if (refused) return callback(Object.assign(new Error(`refusing to connect to ${refused.address}`), { code: 'EADDRNOTALLOWED' }), []);
            return all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family);
          },
          (error: Error) => callback(Object.assign(error, { code: (error as NodeJS.ErrnoException).code ?? 'ENOTFOUND' }), []),
        );
      },
    },
  });
}
