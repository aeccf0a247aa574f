import { Resolver } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import PQueue from 'p-queue';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface HostResolverOptions {
  /** Name servers (`1.1.1.1`, `1.1.1.1:5353`, `[::1]:53`); empty: the system's (`/etc/resolv.conf`). */
  servers: readonly string[];
  /** The whole lookup, time spent waiting for a place included. */
  timeoutMs: number;
  /** Lookups sent to name servers at once. */
  maxConcurrent?: number;
  /** Lookups waiting for a place; the next one is refused at once. */
  maxWaiting?: number;
}

/** Why a host name has no address: no such name, no answer in time, or too many lookups already. */
export type HostResolutionFailure = 'not_found' | 'timeout' | 'busy';

export class HostResolutionError extends Error {
  constructor(
    readonly reason: HostResolutionFailure,
    message: string,
  ) {
    super(message);
    this.name = 'HostResolutionError';
  }
}

export const HOST_LOOKUP_LIMITS = { maxConcurrent: 16, maxWaiting: 256 } as const;

// getaddrinfo answered `localhost` from /etc/hosts; a DNS query would not, and must not leave the machine.
const LOOPBACK: readonly ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Host-name lookups for URLs that users give us, with a deadline and a bound on how many run at once.
 *
 * `dns.lookup` (getaddrinfo) runs on libuv's thread pool (4 threads) and has no timeout: a few
 * lookups against a silent name server held every thread, and with them every lookup and file
 * operation of the process. c-ares (`Resolver`) sends its own queries from the event loop, and each
 * lookup gets its own channel so that cancelling one at its deadline cancels nothing else.
 */
export class HostResolver {
  private readonly lookups: PQueue;
  private readonly maxWaiting: number;

  constructor(private readonly options: HostResolverOptions) {
    this.lookups = new PQueue({ concurrency: options.maxConcurrent ?? HOST_LOOKUP_LIMITS.maxConcurrent });
    this.maxWaiting = options.maxWaiting ?? HOST_LOOKUP_LIMITS.maxWaiting;
  }

  /** IPv4 addresses first (as getaddrinfo ordered `localhost`); IP literals are returned as they are. */
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(bare)) return [{ address: bare, family: ipaddr.parse(bare).kind() === 'ipv6' ? 6 : 4 }];
    if (/^localhost\.?$/i.test(bare)) return [...LOOPBACK];

    if (this.lookups.size >= this.maxWaiting) throw new HostResolutionError('busy', `too many host lookups in progress to look up ${host}`);
    const deadline = Date.now() + this.options.timeoutMs;
    const expired = AbortSignal.timeout(this.options.timeoutMs);
    // The queue skips a lookup whose signal fired while it waited; the race answers at the deadline.
    const answer = this.lookups.add(() => this.query(host, deadline), { signal: expired, throwOnTimeout: true });
    const timedOut = new Promise<never>((_resolve, reject) =>
      expired.addEventListener('abort', () => reject(new HostResolutionError('timeout', `host ${host} did not resolve within ${this.options.timeoutMs} ms`)), { once: true }),
    );
    // Whichever loses the race settles later, unobserved.
    answer.catch(() => undefined);
    timedOut.catch(() => undefined);
    return Promise.race([answer, timedOut]);
  }

  private async query(host: string, deadline: number): Promise<ResolvedAddress[]> {
    const remaining = Math.max(1, deadline - Date.now());
    // Two tries inside the deadline, so one lost datagram does not fail the lookup.
    const resolver = new Resolver({ timeout: Math.max(1, Math.floor(remaining / 2)), tries: 2 });
    if (this.options.servers.length) resolver.setServers([...this.options.servers]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), remaining);
    });
    const answers = Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    try {
      const first = await Promise.race([answers, timedOut]);
      // At the deadline the queries still out are cancelled; what one family answered is kept.
      if (first === 'timeout') resolver.cancel();
      const [v4, v6] = await answers;
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      if (addresses.length) return addresses;
      const unanswered = [v4, v6].some((outcome) => outcome.status === 'rejected' && !isNoSuchName(outcome.reason));
      if (first === 'timeout' || unanswered) {
        throw new HostResolutionError('timeout', `host ${host} did not resolve within ${this.options.timeoutMs} ms`);
      }
      throw new HostResolutionError('not_found', `host ${host} does not resolve`);
    } finally {
      clearTimeout(timer);
    }
  }
}

function isNoSuchName(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'ENOTFOUND' || code === 'ENODATA' || code === 'NOTFOUND' || code === 'NODATA';
}
