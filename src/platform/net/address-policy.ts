import { lookup } from 'node:dns';
import { promisify } from 'node:util';
import ipaddr from 'ipaddr.js';
import { Agent, type Dispatcher } from 'undici';

const lookupAll = promisify(lookup);

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

/** Why a URL may not be called, or undefined when it may. Resolves the host name. */
export async function refusedTarget(url: URL, allowPrivate: boolean): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host) ? [{ address: host }] : await lookupAll(host, { all: true }).catch(() => []);
  if (addresses.length === 0) return `host ${host} does not resolve`;
  const privateOne = addresses.find(({ address }) => !isPublicAddress(address));
  return privateOne ? `resolves to a loopback, private or link-local address (${privateOne.address})` : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * An HTTP dispatcher that checks every address it connects to, so a host that resolves to a public
 * address at registration and to a private one later (DNS rebinding) is still refused.
 */
export function guardedDispatcher(allowPrivate: boolean): Dispatcher {
  if (allowPrivate) return new Agent();
  return new Agent({
    connect: {
      lookup: (hostname: string, options: object, callback: LookupCallback) => {
        lookup(hostname, { ...options, all: true }, (error, addresses) => {
          if (error) return callback(error, []);
          const refused = addresses.find(({ address }) => !isPublicAddress(address));
          if (refused) return callback(Object.assign(new Error(`refusing to connect to ${refused.address}`), { code: 'EADDRNOTALLOWED' }), []);
          const all = (options as { all?: boolean }).all;
          return all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family);
        });
      },
    },
  });
}
