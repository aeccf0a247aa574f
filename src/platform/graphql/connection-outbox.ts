import type { Duplex } from 'node:stream';
import * as ws from 'ws';
import type { WebSocket } from 'ws';
import { withSharedPayload } from './shared-payloads.js';

/** ws's own framing (`Sender.frame`); exported by ws, not described by @types/ws. */
const frame = (ws as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } }).Sender.frame;
interface FrameOptions {
  fin: boolean;
  rsv1: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
}
const TEXT: FrameOptions = { fin: true, rsv1: false, opcode: 0x1, mask: false, readOnly: false };
const BINARY: FrameOptions = { ...TEXT, opcode: 0x2 };

type Callback = (error?: Error) => void;

/**
 * Everything the server sends on one graphql-ws connection, in order: graphql-ws's messages (its
 * `ws.send` is routed here) and the live events pushed past it (see shared-execution.ts). Messages
 * sent in the same tick leave in one write: an event reaches every subscription on a connection at
 * once, and through `ws.send` each message cost two buffered writes and a callback, then a system
 * call per connection. Frames are made by ws itself; the socket carries no extensions (no
 * permessage-deflate), so a frame is the message and a header.
 */
export class ConnectionOutbox {
  private messages: (string | Buffer)[] = [];
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
    this.messages.push(message);
    if (callback) this.callbacks.push(callback);
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(this.flush);
    }
    return this.keepingUp();
  }

  /**
   * Whether the client takes what it is sent: the bytes waiting in the socket beyond what the kernel
   * took (everything sent on the connection, query answers too) are within the bound.
   */
  keepingUp(): boolean {
    return this.socket.writableLength <= this.maxUnsentBytes;
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.messages.length === 0) return;
    const messages = this.messages;
    const callbacks = this.callbacks;
    this.messages = [];
    this.callbacks = [];
    if (this.webSocket.readyState !== this.webSocket.OPEN) {
      // As ws answers a send on a closing socket.
      const error = new Error(`WebSocket is not open: readyState ${this.webSocket.readyState}`);
      for (const callback of callbacks) process.nextTick(callback, error);
      return;
    }
    const frames: Buffer[] = [];
    for (const message of messages) {
      frames.push(...frame(typeof message === 'string' ? Buffer.from(message) : message, typeof message === 'string' ? TEXT : BINARY));
    }
    this.socket.write(Buffer.concat(frames), (error?: Error | null) => {
      for (const callback of callbacks) callback(error ?? undefined);
    });
  };
}
