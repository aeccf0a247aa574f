import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { withSharedPayload } from './shared-payloads.js';

const TEXT = 0x1;
const BINARY = 0x2;

type Callback = (error?: Error) => void;

/** Bytes of the header of an unmasked frame whose payload has `length` bytes (RFC 6455, section 5.2). */
function headerLength(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

/** Writes that header (a final frame, no extension bits, no mask: server to client) at `at`; answers where the payload goes. */
function writeHeader(target: Buffer, at: number, opcode: number, length: number): number {
  target[at] = 0x80 | opcode;
  if (length < 126) {
    target[at + 1] = length;
    return at + 2;
  }
  if (length < 65_536) {
    target[at + 1] = 126;
    target.writeUInt16BE(length, at + 2);
    return at + 4;
  }
  target[at + 1] = 127;
  target.writeUInt32BE(Math.floor(length / 2 ** 32), at + 2);
  target.writeUInt32BE(length >>> 0, at + 6);
  return at + 10;
}

/** Byte lengths of the queued pieces, reused by every flush of the process (flushes never overlap). */
const pieceBytes: number[] = [];

/**
 * Everything the server sends on one graphql-ws connection, in order: graphql-ws's messages (its
 * `ws.send` is routed here) and the live events pushed past it (see shared-execution.ts). Messages
 * sent in the same tick leave in one write: an event reaches every subscription on a connection at
 * once, and through `ws.send` each message cost two buffered writes and a callback, then a system
 * call per connection. The socket carries no extensions (no permessage-deflate), so a frame is its
 * message after a header of 2 to 10 bytes, written here straight into the one buffer of the write: a
 * pushed message is its subscription's prefix, the shared payload and a brace, never joined into a
 * string of its own. Framed by ws, each message was a string joined, copied into a buffer, given a
 * header buffer and copied again into the write: 29 % of what the gateway allocated in a round of
 * bench S10 (sampling heap profiler), and 39 % of what outlived a young collection.
 */
export class ConnectionOutbox {
  /** The queued messages' pieces, in order; `ends[i]` is where message i's pieces end. A Buffer is a binary message of its own. */
  private pieces: (string | Buffer)[] = [];
  private ends: number[] = [];
  private callbacks: Callback[] = [];
  private scheduled = false;

  constructor(
    private readonly webSocket: WebSocket,
    private readonly socket: Duplex,
    /** Bytes the socket may hold that the client has not taken; past it `send` answers false. */
    private readonly maxUnsentBytes: number,
  ) {
    if (webSocket.extensions !== '') throw new Error(`ConnectionOutbox frames messages itself and supports no WebSocket extensions (got "${webSocket.extensions}")`);
    // A close frame goes out at once: what was sent before it must leave first.
    const close = webSocket.close.bind(webSocket);
    webSocket.close = ((...args: Parameters<WebSocket['close']>) => {
      this.flush();
      close(...args);
    }) as WebSocket['close'];
    webSocket.send = ((data: unknown, ...rest: unknown[]) => {
      const callback = rest.find((arg): arg is Callback => typeof arg === 'function');
      this.send(typeof data === 'string' ? withSharedPayload(data) : Buffer.from(data as Uint8Array), callback);
    }) as WebSocket['send'];
  }

  /** Queues a message for this tick's write. Answers false when the client is not keeping up. */
  send(message: string | Buffer, callback?: Callback): boolean {
    this.pieces.push(message);
    return this.queued(callback);
  }

  /** Queues the text message `head + body + tail` without joining it first (a pushed event: see shared-execution.ts). */
  sendJoined(head: string, body: string, tail: string): boolean {
    this.pieces.push(head, body, tail);
    return this.queued(undefined);
  }

  /**
   * Whether the client takes what it is sent: the bytes waiting in the socket beyond what the kernel
   * took (everything sent on the connection, query answers too) are within the bound.
   */
  keepingUp(): boolean {
    return this.socket.writableLength <= this.maxUnsentBytes;
  }

  private queued(callback: Callback | undefined): boolean {
    this.ends.push(this.pieces.length);
    if (callback) this.callbacks.push(callback);
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(this.flush);
    }
    return this.keepingUp();
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.ends.length === 0) return;
    const { pieces, ends, callbacks } = this;
    this.pieces = [];
    this.ends = [];
    this.callbacks = [];
    if (this.webSocket.readyState !== this.webSocket.OPEN) {
      // As ws answers a send on a closing socket.
      const error = new Error(`WebSocket is not open: readyState ${this.webSocket.readyState}`);
      for (const callback of callbacks) process.nextTick(callback, error);
      return;
    }
    let total = 0;
    let start = 0;
    for (const end of ends) {
      let length = 0;
      for (let i = start; i < end; i++) {
        const piece = pieces[i]!;
        pieceBytes[i] = typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length;
        length += pieceBytes[i]!;
      }
      total += headerLength(length) + length;
      start = end;
    }
    const frames = Buffer.allocUnsafe(total);
    let at = 0;
    start = 0;
    for (const end of ends) {
      let length = 0;
      for (let i = start; i < end; i++) length += pieceBytes[i]!;
      at = writeHeader(frames, at, typeof pieces[start] === 'string' ? TEXT : BINARY, length);
      for (let i = start; i < end; i++) {
        const piece = pieces[i]!;
        at += typeof piece === 'string' ? frames.write(piece, at, pieceBytes[i]!, 'utf8') : piece.copy(frames, at);
      }
      start = end;
    }
    pieceBytes.length = 0;
    this.socket.write(frames, (error?: Error | null) => {
      for (const callback of callbacks) callback(error ?? undefined);
    });
  };
}
