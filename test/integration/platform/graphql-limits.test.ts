import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import WebSocket from 'ws';
import { GRAPHQL_LIMITS } from '../../../src/platform/graphql/limits.js';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { startTestApp, type TestApp } from '../../harness.js';

/** A raw graphql-transport-ws socket: the limits are about what a client sends, not what a client library allows. */
interface RawSocket {
  socket: WebSocket;
  messages: { id?: string; type: string; payload?: unknown }[];
  closed: Promise<{ code: number; reason: string }>;
  next(type: string, id?: string): Promise<{ id?: string; type: string; payload?: unknown }>;
  send(message: unknown): void;
}

/** A valid, cheap document of exactly `tokens` lexical tokens (each spread is two: `...` and `F`). */
const documentOfTokens = (tokens: number) => {
  const spreads = Array.from({ length: Math.floor((tokens - 9) / 2) }, () => '...F').join(' ');
  return `{ ${spreads}${(tokens - 9) % 2 ? ' __typename' : ''} } fragment F on Query { __typename }`;
};

describe('GraphQL limits (HTTP and WebSocket)', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let url: string;
  const opened: WebSocket[] = [];

  /** Opens a socket; resolves once the upgrade answered (with `refused` set to the HTTP status when it was not a WebSocket). */
  const open = (): Promise<RawSocket & { refused?: number }> =>
    new Promise((resolve, reject) => {
      const socket = new WebSocket(url, 'graphql-transport-ws');
      opened.push(socket);
      const messages: RawSocket['messages'] = [];
      const waiters: (() => void)[] = [];
      socket.on('message', (data) => {
        messages.push(JSON.parse(String(data)) as RawSocket['messages'][number]);
        for (const wake of waiters.splice(0)) wake();
      });
      const closed = new Promise<{ code: number; reason: string }>((done) => socket.on('close', (code, reason) => done({ code, reason: String(reason) })));
      const raw: RawSocket = {
        socket,
        messages,
        closed,
        send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
        next: (type, id) =>
          new Promise((found, fail) => {
            const look = () => {
              const message = messages.find((m) => m.type === type && (id === undefined || m.id === id));
              if (message) return found(message);
              if (socket.readyState >= WebSocket.CLOSING) return fail(new Error(`closed while waiting for ${type}`));
              waiters.push(look);
            };
            void closed.then(() => waiters.push(() => undefined)).then(look);
            look();
          }),
      };
      socket.once('open', () => resolve(raw));
      socket.once('unexpected-response', (_request, response) => {
        resolve({ ...raw, refused: response.statusCode ?? 0 });
        socket.terminate();
      });
      socket.once('error', (error) => {
        if (socket.readyState !== WebSocket.CLOSED) reject(error);
      });
    });

  const connect = async (token?: string) => {
    const raw = await open();
    raw.send({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} });
    return raw;
  };

  const closeAll = async () => {
    const sockets = opened.splice(0);
    await Promise.all(
      sockets.map((socket) =>
        socket.readyState === WebSocket.CLOSED ? undefined : new Promise((done) => (socket.once('close', done), socket.terminate())),
      ),
    );
    // The server releases a place when it sees the TCP socket close.
    await new Promise((resolve) => setTimeout(resolve, 100));
  };

  beforeAll(async () => {
    t = await startTestApp();
    root = await bootstrapAgent(t, 'limits-root');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    url = `ws://127.0.0.1:${address.port}/graphql`;
  });
  afterAll(async () => {
    await closeAll();
    await t.close();
  });

  it(`accepts ${GRAPHQL_LIMITS.maxSocketsPerAddress} sockets from one address and answers the next upgrade 429`, async () => {
    const sockets = await Promise.all(Array.from({ length: GRAPHQL_LIMITS.maxSocketsPerAddress }, () => open()));
    expect(sockets.filter((s) => s.refused === undefined)).toHaveLength(GRAPHQL_LIMITS.maxSocketsPerAddress);
    expect((await open()).refused).toBe(429);
    // A place comes back when a socket closes.
    sockets[0]!.socket.terminate();
    await sockets[0]!.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await open()).refused).toBeUndefined();
    await closeAll();
  });

  it(`accepts ${GRAPHQL_LIMITS.maxSocketsPerCredential} sockets with one credential and closes the next with 1008`, async () => {
    const sockets = await Promise.all(Array.from({ length: GRAPHQL_LIMITS.maxSocketsPerCredential }, () => connect(root.token)));
    await Promise.all(sockets.map((s) => s.next('connection_ack')));
    const extra = await connect(root.token);
    expect((await extra.closed).code).toBe(1008);
    // Another credential (here: none) is not affected.
    const anonymous = await connect();
    await expect(anonymous.next('connection_ack')).resolves.toMatchObject({ type: 'connection_ack' });
    sockets[0]!.socket.close();
    await sockets[0]!.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await connect(root.token);
    await expect(again.next('connection_ack')).resolves.toMatchObject({ type: 'connection_ack' });
    await closeAll();
  });

  it(`runs ${GRAPHQL_LIMITS.maxOperationsPerSocket} subscriptions on one socket and refuses the next with limit_exceeded`, async () => {
    const raw = await connect(root.token);
    await raw.next('connection_ack');
    for (let i = 1; i <= GRAPHQL_LIMITS.maxOperationsPerSocket; i++) {
      raw.send({ id: `s${i}`, type: 'subscribe', payload: { query: 'subscription { bookingEvents { cursor } }' } });
    }
    raw.send({ id: 'extra', type: 'subscribe', payload: { query: 'subscription { bookingEvents { cursor } }' } });
    const refused = await raw.next('error', 'extra');
    expect(refused.payload).toEqual([expect.objectContaining({ extensions: { code: 'limit_exceeded' } })]);
    expect(raw.messages.filter((m) => m.type === 'error' && m.id !== 'extra')).toEqual([]);
    // Ending one makes room for another.
    raw.send({ id: 's1', type: 'complete' });
    raw.send({ id: 'after', type: 'subscribe', payload: { query: '{ __typename }' } });
    await expect(raw.next('next', 'after')).resolves.toMatchObject({ payload: { data: { __typename: 'Query' } } });
    await closeAll();
  });

  it(`takes a message of ${GRAPHQL_LIMITS.maxMessageBytes} bytes and closes the socket with 1009 on one byte more`, async () => {
    const message = (bytes: number) => {
      const base = JSON.stringify({ type: 'connection_init', payload: { pad: '' } });
      return JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(bytes - base.length) } });
    };
    const fits = await open();
    fits.send(message(GRAPHQL_LIMITS.maxMessageBytes));
    await expect(fits.next('connection_ack')).resolves.toMatchObject({ type: 'connection_ack' });
    const tooBig = await open();
    // The refusal is logged by the server's logger, not printed past it.
    const printed = jest.spyOn(console, 'error');
    try {
      tooBig.send(message(GRAPHQL_LIMITS.maxMessageBytes + 1));
      expect((await tooBig.closed).code).toBe(1009);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
    await closeAll();
  });

  it(`parses a document of ${GRAPHQL_LIMITS.maxTokens} tokens and refuses one more before parsing on, over HTTP and WebSocket`, async () => {
    // The longer document is refused by the parser; the shorter one is parsed and judged by
    // validation (its ~1,000 fragment spreads cost more than the cost limit allows).
    const tokenError = /Document contains more that 2000 tokens|Document contains more than 2000 tokens/;
    const post = (query: string) => t.rest({ method: 'POST', url: '/graphql', payload: { query } });
    const fits = await post(documentOfTokens(GRAPHQL_LIMITS.maxTokens));
    expect(fits.json().errors[0]).toMatchObject({ message: expect.stringMatching(/Cost limit/), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const tooLong = await post(documentOfTokens(GRAPHQL_LIMITS.maxTokens + 1));
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().errors[0]).toMatchObject({ message: expect.stringMatching(tokenError), extensions: { code: 'GRAPHQL_PARSE_FAILED' } });

    const raw = await connect(root.token);
    await raw.next('connection_ack');
    raw.send({ id: 'fits', type: 'subscribe', payload: { query: documentOfTokens(GRAPHQL_LIMITS.maxTokens) } });
    expect(JSON.stringify((await raw.next('error', 'fits')).payload)).toMatch(/Cost limit/);
    raw.send({ id: 'long', type: 'subscribe', payload: { query: documentOfTokens(GRAPHQL_LIMITS.maxTokens + 1) } });
    expect(JSON.stringify((await raw.next('error', 'long')).payload)).toMatch(tokenError);
    // A syntax error is that operation's error; the socket stays open and serves the next one.
    raw.send({ id: 'broken', type: 'subscribe', payload: { query: '{ __typename' } });
    await expect(raw.next('error', 'broken')).resolves.toMatchObject({ type: 'error' });
    raw.send({ id: 'small', type: 'subscribe', payload: { query: '{ __typename }' } });
    await expect(raw.next('next', 'small')).resolves.toMatchObject({ payload: { data: { __typename: 'Query' } } });
    await closeAll();
  });

  it(`closes a socket that has not sent connection_init within ${GRAPHQL_LIMITS.connectionInitWaitMs} ms with 4408`, async () => {
    const started = Date.now();
    const silent = await open();
    expect((await silent.closed).code).toBe(4408);
    expect(Date.now() - started).toBeGreaterThanOrEqual(GRAPHQL_LIMITS.connectionInitWaitMs - 100);
  });
});
