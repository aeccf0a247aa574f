import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, type Client } from 'graphql-sse';
import type { Socket } from 'node:net';
import { GRAPHQL_SSE_PATH } from '../../../src/platform/graphql/sse.js';
import { GRAPHQL_LIMITS } from '../../../src/platform/graphql/limits.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { startTestApp, type TestApp } from '../../harness.js';

interface BookingEventMessage {
  bookingEvents: { cursor: string; type: string; booking: { id: string } };
}

const EVENTS = 'subscription { bookingEvents { cursor type booking { id } } }';

describe('GraphQL over SSE (graphql-sse), both modes', () => {
  let t: TestApp;
  let url: string;
  let agent: AgentWithToken;
  const sockets = new Set<Socket>();
  const clients: Client<boolean>[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    agent = await bootstrapAgent(t, 'sse-agent');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    url = `http://127.0.0.1:${address.port}${GRAPHQL_SSE_PATH}`;
    t.app.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
  });
  afterAll(async () => {
    for (const client of clients) client.dispose();
    await t.close();
  });

  const client = <Single extends boolean>(singleConnection: Single, token = agent.token, extra: Parameters<typeof createClient>[0] = { url: '' }) => {
    const made = createClient({ ...extra, url, singleConnection, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 } as unknown as Parameters<typeof createClient<Single>>[0]);
    clients.push(made);
    return made;
  };
  const first = async <T>(iterator: AsyncIterableIterator<T>) => {
    const { value } = await iterator.next();
    await iterator.return?.();
    return value as T;
  };
  let nextHour = 0;
  const book = () => {
    const slot = hourSlot('2035-01-01T00:00:00Z', nextHour++);
    return createBooking(t, agent, slot.startsAt, slot.endsAt);
  };

  it('runs queries, mutations and subscriptions in distinct connections mode, with the caller from the headers and the cost', async () => {
    const sse = client(false);
    const me = await first(sse.iterate({ query: '{ me { id name } }' }));
    expect(me).toEqual({ data: { me: { id: agent.id, name: 'sse-agent' } }, extensions: { cost: expect.objectContaining({ estimated: 1, actual: 1 }) } });
    const slot = hourSlot('2035-06-01T00:00:00Z', 0);
    const created = await first(
      sse.iterate({ query: 'mutation ($input: CreateBookingInput!) { createBooking(input: $input) { status } }', variables: { input: { agentId: agent.id, ...slot } } }),
    );
    expect(created).toMatchObject({ data: { createBooking: { status: 'confirmed' } } });
    const events = sse.iterate<BookingEventMessage>({ query: EVENTS });
    const next = events.next();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const booking = await book();
    expect((await next).value).toEqual({ data: { bookingEvents: { cursor: expect.any(String), type: 'booking.created', booking: { id: booking.id } } } });
    await events.return?.();
    // Without a credential the subscription answers as graphql-ws does: unauthorized, in GraphQL's shape.
    const anonymous = createClient({ url, retryAttempts: 0 });
    clients.push(anonymous);
    expect(await first(anonymous.iterate({ query: EVENTS }))).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'unauthorized' } })] });
  });

  it('runs operations on one reserved stream in single connection mode, which only its own credential may use', async () => {
    const single = client(true);
    const me = await first(single.iterate({ query: '{ me { id } }' }));
    expect(me).toMatchObject({ data: { me: { id: agent.id } } });
    const events = single.iterate<BookingEventMessage>({ query: EVENTS });
    const next = events.next();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const booking = await book();
    expect((await next).value).toMatchObject({ data: { bookingEvents: { type: 'booking.created', booking: { id: booking.id } } } });
    await events.return?.();

    // A reservation's token is not enough: another credential cannot open it or add to it.
    const reserved = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${agent.token}` } });
    expect(reserved.status).toBe(201);
    const token = await reserved.text();
    const other = await createAgent(t, agent, 'other');
    const stolen = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${other.token}`, 'x-graphql-event-stream-token': token } });
    expect(stolen.status).toBe(404);
    expect(await stolen.json()).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'not_found' } }] });
  });

  it('writes each event’s cursor as its SSE id, and resumes from Last-Event-ID', async () => {
    const stream = async (headers: Record<string, string>) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, ...headers },
        body: JSON.stringify({ query: EVENTS }),
      });
      expect(response.status).toBe(200);
      return response;
    };
    const live = await stream({});
    await new Promise((resolve) => setTimeout(resolve, 200));
    const booking = await book();
    const reader = live.body!.getReader();
    let text = '';
    while (!text.includes('event: next')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const [, id, data] = /id: (\d+)\nevent: next\ndata: (.*)\n/.exec(text)!;
    expect(JSON.parse(data!)).toMatchObject({ data: { bookingEvents: { cursor: id, booking: { id: booking.id } } } });
    // Coming back with that id replays what followed it.
    const later = await book();
    const resumed = await stream({ 'last-event-id': id! });
    const again = resumed.body!.getReader();
    let replay = '';
    while (!replay.includes('event: next')) replay += new TextDecoder().decode((await again.read()).value);
    await again.cancel();
    expect(replay).toContain(`"booking":{"id":"${later.id}"}`);
  });

  it('resumes a graphql-sse subscription after a dropped connection: every event once, in order, while bookings are made', async () => {
    let lastEventId: string | undefined;
    const received: BookingEventMessage['bookingEvents'][] = [];
    const resumable = createClient({
      url,
      retryAttempts: 5,
      retry: () => new Promise((resolve) => setTimeout(resolve, 50)),
      // The client sends back the id of the last event it saw, as EventSource does.
      headers: () => ({ authorization: `Bearer ${agent.token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }),
    });
    clients.push(resumable);
    let reconnected = 0;
    const done = new Promise<void>((resolve, reject) => {
      resumable.subscribe<BookingEventMessage>(
        { query: EVENTS },
        {
          next: ({ data }) => {
            received.push(data!.bookingEvents);
            lastEventId = data!.bookingEvents.cursor;
            if (received.length === 30) resolve();
          },
          error: reject,
          complete: () => undefined,
        },
        { connected: (retried) => void (retried && reconnected++) },
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const made: string[] = [];
    for (let i = 0; i < 30; i++) {
      made.push((await book()).id);
      // Mid-stream, cut every open connection (only SSE streams are real sockets here: REST goes through inject).
      if (i === 12) for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await done;
    expect(reconnected).toBeGreaterThanOrEqual(1);
    expect(received.map((event) => event.booking.id)).toEqual(made);
    const cursors = received.map((event) => BigInt(event.cursor));
    expect(cursors.every((cursor, i) => i === 0 || cursor > cursors[i - 1]!)).toBe(true);
  });

  it(`holds the bounds of graphql-ws: ${GRAPHQL_LIMITS.maxSocketsPerCredential} open streams per credential, the document limits, ${GRAPHQL_LIMITS.maxOperationsPerSocket} operations per stream`, async () => {
    const holder = await createAgent(t, agent, 'holder');
    const open = () =>
      fetch(url, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${holder.token}` },
        body: JSON.stringify({ query: EVENTS }),
      });
    const streams = await Promise.all(Array.from({ length: GRAPHQL_LIMITS.maxSocketsPerCredential }, open));
    expect(streams.map((response) => response.status)).toEqual(streams.map(() => 200));
    const refused = await open();
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'limit_exceeded' } }] });
    await streams[0]!.body!.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await open();
    expect(again.status).toBe(200);
    await Promise.all([...streams.slice(1), again].map((response) => response.body!.cancel()));
    await new Promise((resolve) => setTimeout(resolve, 100));

    const sse = client(false);
    const tooDeep = await first(sse.iterate({ query: `{ me { ${'parent { '.repeat(12)}id${' }'.repeat(12)} } }` }));
    // As graphql-ws answers it (graphql-armor's code for its rules).
    expect(tooDeep).toEqual({ errors: [{ message: expect.stringContaining('depth limit of 10'), extensions: { code: 'BAD_USER_INPUT' } }] });
    const tooLong = await fetch(url, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ query: `{ me { id } } # ${'x'.repeat(GRAPHQL_LIMITS.maxMessageBytes)}` }),
    });
    expect(tooLong.status).toBe(400);
    expect((await tooLong.json()).errors[0].extensions).toEqual({ code: 'validation', errors: { body: 'is too large' } });

    // Single connection mode: the 101st operation on one stream is refused.
    const reserved = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${agent.token}` } });
    const token = await reserved.text();
    const stream = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${agent.token}`, 'x-graphql-event-stream-token': token } });
    expect(stream.status).toBe(200);
    const add = (operationId: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, 'x-graphql-event-stream-token': token },
        body: JSON.stringify({ query: EVENTS, extensions: { operationId } }),
      });
    const added = await Promise.all(Array.from({ length: GRAPHQL_LIMITS.maxOperationsPerSocket }, (_, i) => add(`op-${i}`)));
    expect(added.map((response) => response.status)).toEqual(added.map(() => 202));
    const over = await add('op-over');
    expect(over.status).toBe(409);
    expect((await over.json()).errors[0].extensions).toEqual({ code: 'limit_exceeded' });
    await stream.body!.cancel();
  });

  it(`drops a reservation nobody opens within ${GRAPHQL_LIMITS.connectionInitWaitMs} ms`, async () => {
    const reserved = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${agent.token}` } });
    const token = await reserved.text();
    await new Promise((resolve) => setTimeout(resolve, GRAPHQL_LIMITS.connectionInitWaitMs + 300));
    const late = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${agent.token}`, 'x-graphql-event-stream-token': token } });
    expect(late.status).toBe(404);
  });

  it('shuts down without waiting for a stream whose client went away', async () => {
    // An app of its own, to be closed here: shutdown waits for handlers still running (at most 10 s).
    const own = await startTestApp({ jobs: false });
    try {
      const owner = await bootstrapAgent(own, 'leaving-sse-agent');
      await own.app.listen({ port: 0, host: '127.0.0.1' });
      const address = own.app.server.address();
      if (!address || typeof address === 'string') throw new Error('no address');
      const leaving = new AbortController();
      const stream = await fetch(`http://127.0.0.1:${address.port}${GRAPHQL_SSE_PATH}`, {
        method: 'POST',
        headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ query: EVENTS }),
        signal: leaving.signal,
      });
      expect(stream.status).toBe(200);
      leaving.abort();
      await stream.body?.cancel().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the server sees the socket close
      const started = performance.now();
      await own.app.close();
      // Before, the stream counted as in flight until the shutdown's 10 s wait ran out.
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await own.close();
    }
  }, 30_000);
});
