import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { ConnectionOutbox } from '../../src/platform/graphql/connection-outbox.js';

/** A real WebSocket pair over loopback; the server side sends through an outbox. */
async function connect(maxUnsentBytes = 1024 * 1024) {
  const sockets = new WebSocketServer({ noServer: true });
  const http: Server = createServer();
  let serverSocket: Duplex | undefined;
  const accepted = new Promise<{ ws: WebSocket; outbox: ConnectionOutbox }>((resolve) =>
    http.on('upgrade', (request, socket, head) => {
      serverSocket = socket;
      sockets.handleUpgrade(request, socket, head, (ws) => resolve({ ws, outbox: new ConnectionOutbox(ws, socket, maxUnsentBytes) }));
    }),
  );
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`);
  const received: string[] = [];
  client.on('message', (data) => received.push(String(data)));
  await once(client, 'open');
  const { ws, outbox } = await accepted;
  opened.push(() => {
    client.terminate();
    ws.terminate();
    http.close();
  });
  return { client, ws, outbox, received, serverSocket: serverSocket! };
}

const opened: (() => void)[] = [];
afterEach(() => opened.splice(0).forEach((close) => close()));
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('ConnectionOutbox', () => {
  it('sends what one tick queued in one write, in order, through ws.send as well, and calls every callback', async () => {
    const { ws, outbox, received, serverSocket } = await connect();
    let writes = 0;
    const write = serverSocket.write.bind(serverSocket) as (...args: unknown[]) => boolean;
    serverSocket.write = ((...args: unknown[]) => {
      writes++;
      return write(...args);
    }) as typeof serverSocket.write;
    const called: string[] = [];
    outbox.send('one', () => called.push('one'));
    ws.send('two', () => called.push('two'));
    outbox.send('x'.repeat(70_000)); // a frame with a 64-bit length
    outbox.send('four');
    await until(() => received.length === 4);
    expect(received.map((message) => (message.length > 10 ? `${message.length}` : message))).toEqual(['one', 'two', '70000', 'four']);
    expect(writes).toBe(1);
    await until(() => called.length === 2);
    expect(called).toEqual(['one', 'two']);
  });

  it('frames every length a header has a form for, counted in bytes, and a message sent in pieces as one', async () => {
    const { client, ws, outbox } = await connect();
    const received: (string | Buffer)[] = [];
    client.removeAllListeners('message');
    client.on('message', (data, isBinary) => received.push(isBinary ? (data as Buffer) : String(data)));
    // A 7-bit length up to 125 bytes, a 16-bit one from 126 to 65,535, a 64-bit one past it; 'é' is two bytes.
    const texts = ['', 'a'.repeat(125), 'a'.repeat(126), 'é'.repeat(62) + 'a', 'é'.repeat(63), 'b'.repeat(65_535), 'é'.repeat(32_767) + 'c', 'é'.repeat(32_768)];
    for (const text of texts) outbox.send(text);
    outbox.sendJoined('{"id":"7","type":"next","payload":', '{"data":{"é":1}}', '}');
    ws.send(Buffer.from([0, 1, 2, 255]));
    await until(() => received.length === texts.length + 2);
    expect(received.slice(0, texts.length).map((text) => Buffer.byteLength(text as string))).toEqual([0, 125, 126, 125, 126, 65_535, 65_535, 65_536]);
    expect(received.slice(0, texts.length)).toEqual(texts);
    expect(received.at(-2)).toBe('{"id":"7","type":"next","payload":{"data":{"é":1}}}');
    expect(received.at(-1)).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('sends what came before a close before the close frame, and answers later sends with an error', async () => {
    const { client, ws, outbox, received } = await connect();
    outbox.send('last words');
    ws.close(4000, 'bye');
    const [code] = (await once(client, 'close')) as [number];
    expect(code).toBe(4000);
    expect(received).toEqual(['last words']);
    const answer = await new Promise<Error | undefined>((resolve) => outbox.send('too late', resolve));
    expect(answer).toBeInstanceOf(Error);
  });

  it('answers false once more than its bound waits for a client that stopped reading', async () => {
    const bound = 256 * 1024;
    const { client, outbox, serverSocket } = await connect(bound);
    (client as unknown as { _socket: Socket })._socket.pause();
    const chunk = 'y'.repeat(64 * 1024);
    // Until the kernel's buffers are full nothing waits in the socket; then each chunk adds to it.
    let waitingAtLastYes = 0;
    let sent = 0;
    for (;;) {
      const waiting = serverSocket.writableLength;
      if (!outbox.send(chunk)) {
        // Just above the bound: refused; the last acceptance was at or below it, one flush (one chunk) earlier.
        expect(waiting).toBeGreaterThan(bound);
        expect(waitingAtLastYes).toBeLessThanOrEqual(bound);
        expect(waiting - waitingAtLastYes).toBeLessThanOrEqual(chunk.length + 14);
        break;
      }
      waitingAtLastYes = waiting;
      sent++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(sent).toBeGreaterThan(bound / chunk.length);
  });
});
