import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { freePort } from '../../../src/platform/db/embedded-postgres.js';
import { createTestDatabase } from '../../harness.js';
import { errorLines, startServer, waitFor, type RunningServer } from '../../factories/server-process.js';
import { eventually, startWebhookReceiver } from '../../factories/webhook-receiver.js';

/** The server process as `npm start` runs it, on a database of its own, killed in the ways processes die. */
describe('a server process that is stopped or killed', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new pg.Pool({ connectionString: database.url, max: 2 });
  });
  const running = new Set<RunningServer>();
  afterAll(async () => {
    for (const server of running) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await db.end();
    await database.drop();
  });

  const start = async (env: Record<string, string> = {}): Promise<{ server: RunningServer; base: string; port: number }> => {
    const port = await freePort();
    const server = startServer({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database.url, PRICE_PROVIDERS: '', WEBHOOK_ALLOW_PRIVATE: 'true', ...env });
    await waitFor(server, 'gateway ready');
    return { server, base: `http://127.0.0.1:${port}`, port };
  };
  const post = async (base: string, path: string, body: unknown, token?: string) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };
  let token: string;
  let agentId: string;

  it('drains on SIGTERM under load: every 2xx is stored whole, every WebSocket gets a close code, the process exits in time', async () => {
    const { server, base, port } = await start();
    running.add(server);
    const root = await post(base, '/api/agents', { name: 'root', bootstrap: true });
    expect(root.status).toBe(201);
    token = root.body.public_token!;
    agentId = root.body.id!;

    const closeCodes: number[] = [];
    const clients: Client[] = Array.from({ length: 5 }, () =>
      createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${token}` },
        lazy: false,
        // The close at shutdown is expected; it is counted below rather than printed.
        onNonLazyError: () => undefined,
        retryAttempts: 0,
        on: { closed: (event) => void closeCodes.push((event as { code: number }).code) },
      }),
    );
    for (const client of clients) client.subscribe({ query: 'subscription { bookingEvents { cursor } }' }, { next: () => undefined, error: () => undefined, complete: () => undefined });

    // Eight clients book distinct hours as fast as they can until the server stops answering.
    const created: string[] = [];
    let slot = 0;
    let stopped = false;
    const load = Array.from({ length: 8 }, async () => {
      while (!stopped) {
        const hour = slot++;
        const startsAt = new Date(Date.UTC(2034, 0, 1) + hour * 3_600_000);
        try {
          const response = await post(base, '/api/bookings', { agentId, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 1_800_000).toISOString() }, token);
          if (response.status === 201) created.push(response.body.id!);
          else if (response.status !== 503) throw new Error(`unexpected ${response.status}`);
        } catch (error) {
          if ((error as Error).message.startsWith('unexpected')) throw error;
          return; // connection refused or reset: the server has stopped
        }
      }
    });
    await eventually(async () => (created.length >= 20 ? true : undefined), 20_000);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const drainMs = Date.now() - signalled;
    stopped = true;
    await Promise.all(load);

    expect(code).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
    // app.close() waits up to 10 s for requests in flight (app.ts). Over the bound, the server's own
    // log since the signal says which step held it.
    const sinceSignal = server.output().slice(server.output().indexOf('draining requests'));
    expect({ drainMs, log: drainMs < 12_000 ? '' : sinceSignal }).toEqual({ drainMs: expect.any(Number), log: '' });
    expect(drainMs).toBeLessThan(12_000);
    expect(closeCodes).toHaveLength(clients.length);
    expect(closeCodes.every((closeCode) => closeCode === 1001)).toBe(true);
    // Every booking a client was told about is there, whole: its slot and its event.
    const { rows } = await db.query<{ id: string; slots: number; events: number }>(
      `select b.id, (select count(*)::int from booking_slots s where s.booking_id = b.id) as slots,
              (select count(*)::int from booking_events e where e.booking_id = b.id) as events
         from bookings b where b.id = any($1::uuid[])`,
      [created],
    );
    expect(rows).toHaveLength(created.length);
    expect(rows.every((row) => row.slots === 1 && row.events === 1)).toBe(true);
    // Nothing half-written anywhere: no booking without its slot and event.
    const { rows: partial } = await db.query(
      `select id from bookings b where not exists (select 1 from booking_slots s where s.booking_id = b.id)
                                     or not exists (select 1 from booking_events e where e.booking_id = b.id)`,
    );
    expect(partial).toEqual([]);
  }, 90_000);

  it('delivers an event once more after kill -9 in the middle of its delivery, with the same webhook-id', async () => {
    // The first attempt is held open by the receiver while the process dies; later ones are answered.
    const receiver = await startWebhookReceiver((hit) => (hit === 1 ? 'hang' : 204));
    const first = await start({ WEBHOOK_TIMEOUT_MS: '1000' });
    running.add(first.server);
    try {
      expect((await post(first.base, '/api/webhooks', { url: receiver.url, events: ['booking.created'] }, token)).status).toBe(201);
      const booked = await post(first.base, '/api/bookings', { agentId, startsAt: '2034-06-01T09:00:00Z', endsAt: '2034-06-01T10:00:00Z' }, token);
      expect(booked.status).toBe(201);
      await eventually(async () => (receiver.hits >= 1 ? true : undefined), 10_000);
      first.server.child.kill('SIGKILL');
      await first.server.exited;

      const second = await start({ WEBHOOK_TIMEOUT_MS: '1000' });
      running.add(second.server);
      try {
        // Due again when the dead process's lease ends (the timeout plus a 10 s margin).
        const [delivered] = await receiver.waitFor(1, 20_000);
        expect(delivered!.json.data.booking.id).toBe(booked.body.id);
        expect(delivered!.headers['webhook-id']).toBe(receiver.hitHeaders[0]!['webhook-id']);
        // The outcome is recorded after the receiver has answered (outcomes are written in batches).
        const rows = await eventually(async () => {
          const { rows: found } = await db.query<{ status: string; attempts: number }>(
            `select d.status, d.attempts from webhook_deliveries d join booking_events e on e.id = d.event_id where e.booking_id = $1`,
            [booked.body.id],
          );
          // No row yet: the first attempt's outcome writes it.
          return found.length === 0 || found.some((row) => row.status === 'pending') ? undefined : found;
        }, 10_000);
        expect(rows).toEqual([{ status: 'delivered', attempts: 1 }]);
        expect(receiver.received).toHaveLength(1);
      } finally {
        second.server.child.kill('SIGTERM');
        await second.server.exited;
      }
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
