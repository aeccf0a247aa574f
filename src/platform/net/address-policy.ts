import ipaddr from 'ipaddr.js';
import { Agent, type Dispatcher } from 'undici';
import { HostResolutionError, type HostResolver } from './host-resolver.js';

/**
 * Outbound requests to URLs that users give us (webhooks) must not reach loopback, private or
 * link-local addresses unless configuration allows it: otherwise the gateway becomes a way into
 * the network it runs in.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
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
  return privateOne ? `resolves to a loopback, private or link-local address (${privateOne.address})` : undefined;
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
