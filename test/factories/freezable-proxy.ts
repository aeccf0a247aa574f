import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** One client connection through the proxy. */
export interface ProxiedConnection {
  /** The first bytes the client sent (a PostgreSQL startup message names its `application_name`). */
  readonly startup: string;
  frozen: boolean;
}

export interface FreezableProxy {
  /** `target` with the proxy's host and port. */
  readonly url: string;
  /** Stops passing bytes: without `which`, on every connection, new ones included; with it, on the open ones it picks. */
  freeze(which?: (connection: ProxiedConnection) => boolean): void;
  /** Passes on everything held back, in order, and every byte after. */
  thaw(): void;
  /**
   * Delivers what the server sends to the connections it picks (open and future ones) `ms` later, in
   * order: how a busy server's notifications trail its answers on other connections.
   */
  delayToClient(which: (connection: ProxiedConnection) => boolean, ms: number): void;
  /** Closes every connection and refuses new ones, as a stopped server does. */
  refuse(): Promise<void>;
  /** Accepts connections again, on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

interface Link extends ProxiedConnection {
  client: Socket;
  upstream: Socket | undefined;
  toUpstream: Buffer[];
  toClient: Buffer[];
}

/**
 * A TCP proxy in front of PostgreSQL that can stop passing bytes without closing anything, which is
 * how a frozen server or a black-holed network looks to a client: connections stay open, nothing
 * answers, no error arrives. Bytes sent meanwhile are held and delivered on thaw unless their sender
 * gave up and closed first (then the other side is closed too).
 */
export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const targetUrl = new URL(target);
  const links = new Set<Link>();
  let freezeNew = false;
  const delays: { which: (connection: ProxiedConnection) => boolean; ms: number }[] = [];
  const toClient = (link: Link, chunk: Buffer) => {
    const delay = delays.find((rule) => rule.which(link))?.ms ?? 0;
    if (delay > 0) setTimeout(() => link.client.write(chunk), delay);
    else link.client.write(chunk);
  };

  const flush = (link: Link) => {
    if (link.frozen || !link.upstream) return;
    for (const chunk of link.toUpstream.splice(0)) link.upstream.write(chunk);
    for (const chunk of link.toClient.splice(0)) link.client.write(chunk);
  };
  const openUpstream = (link: Link) => {
    const upstream = connect(Number(targetUrl.port), targetUrl.hostname);
    link.upstream = upstream;
    upstream.on('data', (chunk: Buffer) => {
      if (link.frozen) link.toClient.push(chunk);
      else toClient(link, chunk);
    });
    upstream.on('error', () => link.client.destroy());
    upstream.on('close', () => link.client.destroy());
    flush(link);
  };

  const server = createServer((client) => {
    const link: Link = { client, upstream: undefined, toUpstream: [], toClient: [], frozen: freezeNew, startup: '' };
    links.add(link);
    client.on('data', (chunk: Buffer) => {
      if (link.startup === '') (link as { startup: string }).startup = chunk.toString('latin1');
      if (link.frozen || !link.upstream) link.toUpstream.push(chunk);
      else link.upstream.write(chunk);
    });
    client.on('error', () => link.upstream?.destroy());
    client.on('close', () => {
      links.delete(link);
      link.upstream?.destroy();
    });
    if (!link.frozen) openUpstream(link);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const proxied = new URL(target);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  const dropAll = () => {
    for (const link of links) {
      link.client.destroy();
      link.upstream?.destroy();
    }
  };

  return {
    url: proxied.toString(),
    freeze(which) {
      if (!which) freezeNew = true;
      for (const link of links) if (!which || which(link)) link.frozen = true;
    },
    delayToClient(which, ms) {
      delays.push({ which, ms });
    },
    thaw() {
      freezeNew = false;
      for (const link of links) {
        link.frozen = false;
        if (link.upstream) flush(link);
        else openUpstream(link);
      }
    },
    async refuse() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      dropAll();
      await closed;
    },
    async accept() {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    async close() {
      dropAll();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
