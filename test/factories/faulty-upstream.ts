import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * How an upstream misbehaves:
 * - `healthy`: the well-behaved fake behind it answers (its bytes are passed through unchanged);
 * - `down`: nothing listens on the port any more, so connections are refused;
 * - `silent`: connections are accepted and never get a byte back;
 * - `garbage`: answers in the protocol but with nonsense content (HTTP: 200 with an HTML page where
 *   JSON was expected; SMTP: a greeting that is not an SMTP reply);
 * - `babble`: HTTP only, bytes that are not HTTP at all.
 */
export type UpstreamMode = 'healthy' | 'down' | 'silent' | 'garbage' | 'babble';

export interface FaultyUpstream {
  /** `http://127.0.0.1:<port>` or `smtp://127.0.0.1:<port>`; the port stays the same in every mode. */
  url: string;
  mode: UpstreamMode;
  setMode(mode: UpstreamMode): Promise<void>;
  /** Connections accepted since the last `setMode`, in any mode but `down`. */
  connections: number;
  close(): Promise<void>;
}

const GARBAGE_PAGE = '<html><body><h1>Welcome to nginx!</h1></body></html>';

/**
 * A TCP front on a fixed loopback port in front of a well-behaved fake (`healthyUrl`, e.g. the fake
 * screener or a real SMTP server), switchable between the ways an external service fails, so the
 * gateway keeps one configured address for the whole test. `down` really closes the listening
 * socket: the client sees ECONNREFUSED as with the service stopped, not a reset from a live process.
 */
export async function startFaultyUpstream(options: { protocol: 'http' | 'smtp'; healthyUrl?: string }): Promise<FaultyUpstream> {
  const healthyPort = options.healthyUrl ? Number(new URL(options.healthyUrl).port) : undefined;
  const held = new Set<Socket>();
  let mode: UpstreamMode = 'healthy';
  let connections = 0;
  let port = 0;
  let server: Server | undefined;

  const onConnection = (socket: Socket) => {
    connections++;
    held.add(socket);
    socket.on('close', () => held.delete(socket));
    socket.on('error', () => undefined);
    switch (mode) {
      case 'healthy':
      {
        if (healthyPort === undefined) return socket.destroy();
        // Both ends held: a kept-alive connection must not carry healthy answers into the next mode.
        const behind = connect(healthyPort, '127.0.0.1');
        held.add(behind);
        behind.on('close', () => held.delete(behind));
        behind.on('error', () => socket.destroy());
        socket.on('close', () => behind.destroy());
        socket.pipe(behind).pipe(socket);
        return;
      }
      case 'silent':
        return;
      case 'babble':
        // After the request, so the client reads the nonsense as its answer rather than a hang-up.
        socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6 this is not HTTP\r\n'));
        return;
      case 'garbage':
        if (options.protocol === 'smtp') {
          socket.end('hello there, this is not SMTP\r\n');
          return;
        }
        // Answer once the request head is in, as a misconfigured proxy in front of the service would.
        socket.once('data', () =>
          socket.end(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${Buffer.byteLength(GARBAGE_PAGE)}\r\nconnection: close\r\n\r\n${GARBAGE_PAGE}`),
        );
        return;
      case 'down':
        return socket.destroy();
    }
  };

  const listen = async () => {
    server = createServer(onConnection);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  };
  const stopListening = async () => {
    const closing = server;
    server = undefined;
    for (const socket of held) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  await listen();
  return {
    url: `${options.protocol}://127.0.0.1:${port}`,
    get mode() {
      return mode;
    },
    get connections() {
      return connections;
    },
    async setMode(next) {
      if (next === mode) return;
      // Connections held by the previous mode end, so a client never straddles two modes.
      for (const socket of held) socket.destroy();
      if (next === 'down') await stopListening();
      else if (!server) await listen();
      mode = next;
      connections = 0;
    },
    close: stopListening,
  };
}
