import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import createClient from 'openapi-fetch';
import pg from 'pg';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { hourSlot, postBooking } from '../../factories/bookings.js';
import { eventually } from '../../factories/webhook-receiver.js';
import { BookingChangesDocument } from '../../generated/graphql.js';
import type { paths } from '../../generated/openapi.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/**
 * Issue 28's must-show: WRITERS writers on AGENTS agents for CHANGE_FEED_SOAK_SECONDS (the issue asks
 * for 30 s; CI runs the 8 s default, about 550 events on two loaded cores, enough that writers of one
 * agent and of several contend on every page), a family reader and one reader per agent following
 * `since` in pages of 7, and a webhook receiver that verifies every signature and drops every 10th
 * delivery (answers 200 and forgets it), recovering through the feed: each sees every change exactly
 * once, in commit order per agent.
 *
 * It fails without the feed's gap protection: a family read without its FOR SHARE locks, or one that
 * reads the events in the statement that takes them (its snapshot older than the writers it waited
 * for), skips events; without the agent's row lock in its writers (cancel_booking,
 * record_booking_event) an agent's own reader does.
 */
const SECONDS = Number(process.env.CHANGE_FEED_SOAK_SECONDS ?? 8);
const WRITERS = 20;
const AGENTS = 5;
const PAGE = 7;
const DROP_EVERY = 10;
const FAMILY_READER = (process.env.CHANGE_FEED_SOAK_FAMILY_READER ?? 'on') !== 'off';

type FeedPage = paths['/api/bookings/changes']['get']['responses'][200]['content']['application/json'];
type Api = ReturnType<typeof createClient<paths>>;

/** Seeded, so a failing run can be repeated (CHANGE_FEED_SOAK_SEED). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0;
};
const ms = (values: number[]) => `p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms, max ${percentile(values, 100).toFixed(1)} ms (n=${values.length})`;

async function page(api: Api, agent: AgentWithToken, query: { since: string; limit: number; family?: boolean }): Promise<FeedPage> {
  const result = await api.GET('/api/bookings/changes', { params: { query }, headers: bearer(agent.token) });
  if (!result.data) throw new Error(`${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

/**
 * A webhook receiver as the README tells one to be written: it verifies the signature, applies a
 * delivery whose `webhook-previous-cursor` is the last cursor it applied, ignores one it has seen, and
 * on a gap reads the change feed from its last cursor. Deliveries of one agent are handled one at a
 * time; the dropped ones are answered 200 and forgotten.
 */
class FeedFollowingReceiver {
  readonly applied = new Map<string, string[]>();
  readonly stats = { received: 0, dropped: 0, badSignatures: 0, duplicates: 0, inOrder: 0, gaps: 0, recoveredThroughFeed: 0, recoveredAtReconcile: 0, feedPages: 0 };
  /** The cursors of the deliveries it dropped, and of the changes it applied from the feed rather than from a delivery. */
  readonly droppedCursors = new Set<string>();
  readonly appliedFromFeed = new Set<string>();
  /** Anything that went wrong while handling a delivery (the test expects none). */
  readonly failures: unknown[] = [];
  private readonly last = new Map<string, bigint>();
  private readonly queues = new Map<string, Promise<void>>();
  private server!: Server;
  url = '';

  constructor(
    private readonly api: Api,
    private readonly agents: Map<string, AgentWithToken & { secret?: string }>,
  ) {
    for (const id of agents.keys()) {
      this.applied.set(id, []);
      this.last.set(id, 0n);
    }
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const agentId = request.url!.split('/').at(-1)!;
        const agent = this.agents.get(agentId);
        try {
          new StandardWebhook(agent!.secret!).verify(body, {
            'webhook-id': String(request.headers['webhook-id']),
            'webhook-timestamp': String(request.headers['webhook-timestamp']),
            'webhook-signature': String(request.headers['webhook-signature']),
          });
        } catch {
          this.stats.badSignatures++;
          response.statusCode = 400;
          response.end();
          return;
        }
        const ordinal = ++this.stats.received;
        response.statusCode = 200;
        response.end();
        const cursor = String(request.headers['webhook-cursor']);
        if (ordinal % DROP_EVERY === 0) {
          this.stats.dropped++;
          this.droppedCursors.add(cursor);
          return;
        }
        const previous = request.headers['webhook-previous-cursor'];
        const { id } = JSON.parse(body) as { id: string };
        if (id !== `evt_${cursor}`) this.failures.push(new Error(`body id ${id} is not evt_${cursor}`));
        void this.enqueue(agentId, () => this.handle(agentId, BigInt(cursor), BigInt(typeof previous === 'string' ? previous : '0')));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** What a receiver does now and then (here: once, after the run): read the feed from its last cursor, for a last delivery it never got. */
  async reconcile(): Promise<void> {
    await Promise.all(
      [...this.agents.keys()].map((agentId) =>
        this.enqueue(agentId, async () => {
          this.stats.recoveredAtReconcile += await this.catchUp(agentId);
        }),
      ),
    );
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private enqueue(agentId: string, work: () => Promise<void>): Promise<void> {
    const next = (this.queues.get(agentId) ?? Promise.resolve()).then(work).catch((error: unknown) => {
      this.failures.push(error);
    });
    this.queues.set(agentId, next);
    return next;
  }

  private async handle(agentId: string, cursor: bigint, previous: bigint): Promise<void> {
    const last = this.last.get(agentId)!;
    if (cursor <= last) {
      this.stats.duplicates++;
      return;
    }
    if (previous === last) {
      this.stats.inOrder++;
      this.apply(agentId, cursor);
      return;
    }
    // Missed something (a dropped delivery, or this one overtook an earlier one): exactly that, from the feed.
    this.stats.gaps++;
    this.stats.recoveredThroughFeed += await this.catchUp(agentId);
  }

  private async catchUp(agentId: string): Promise<number> {
    let count = 0;
    for (;;) {
      const answer = await page(this.api, this.agents.get(agentId)!, { since: String(this.last.get(agentId)!), limit: PAGE });
      this.stats.feedPages++;
      for (const change of answer.changes) {
        this.apply(agentId, BigInt(change.cursor));
        this.appliedFromFeed.add(change.cursor);
        count++;
      }
      if (!answer.hasMore) return count;
    }
  }

  private apply(agentId: string, cursor: bigint): void {
    this.applied.get(agentId)!.push(String(cursor));
    this.last.set(agentId, cursor);
  }
}

describe('the change feed under concurrent writers', () => {
  let t: TestApp;
  let api: Api;
  let parent: AgentWithToken;
  let agents: (AgentWithToken & { secret?: string })[];
  let receiver: FeedFollowingReceiver;
  let observer: pg.Client;
  let slowWriters: pg.Pool;

  beforeAll(async () => {
    t = await startTestApp({ env: { PENDING_PROPOSALS_MAX: '100000', BOOKING_CAP: '100000' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    api = createClient<paths>({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    const root = await bootstrapAgent(t);
    parent = await createAgent(t, root, 'family');
    agents = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await createAgent(t, parent, `writer-${i}`));
    receiver = new FeedFollowingReceiver(api, new Map(agents.map((agent) => [agent.id, agent])));
    await receiver.start();
    for (const agent of agents) {
      const response = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: `${receiver.url}/${agent.id}` } });
      expect(response.statusCode).toBe(201);
      agent.secret = response.json<{ secret: string }>().secret;
    }
    observer = new pg.Client({ connectionString: t.databaseUrl });
    await observer.connect();
    slowWriters = new pg.Pool({ connectionString: t.databaseUrl, max: 8 });
  });
  afterAll(async () => {
    await observer?.end();
    await slowWriters?.end();
    await receiver?.close();
    await t?.close();
  });

  it(
    `gives every reader and the webhook receiver every change exactly once, in commit order per agent (${WRITERS} writers, ${AGENTS} agents, ${SECONDS} s)`,
    async () => {
      const seed = Number(process.env.CHANGE_FEED_SOAK_SEED ?? 20261126);
      const started = Date.now();
      const deadline = started + SECONDS * 1000;
      const writeLatency: number[] = [];
      const familyReadLatency: number[] = [];
      const outcomes = new Map<string, number>();
      const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);

      const writer = async (index: number) => {
        const next = random(seed + index);
        const agent = agents[index % AGENTS]!;
        const mine: { id: string; startsAt: string; endsAt: string }[] = [];
        let slot = 0;
        let soon = 0;
        while (Date.now() < deadline) {
          const roll = next();
          const begun = performance.now();
          if (roll < 0.45 || mine.length === 0) {
            const { startsAt, endsAt } = hourSlot('2036-01-01T00:00:00Z', index * 10_000 + slot++);
            const response = await postBooking(t, agent, { startsAt, endsAt });
            expect(response.statusCode).toBe(201);
            mine.push(response.json());
            count('created');
          } else if (roll < 0.55) {
            const [booking] = mine.splice(Math.floor(next() * mine.length), 1);
            const response = await t.rest({ method: 'DELETE', url: `/api/bookings/${booking!.id}`, headers: bearer(agent.token) });
            expect(response.statusCode).toBe(204);
            count('cancelled');
          } else if (roll < 0.7) {
            // Another process's writer whose commit comes a little later than its event id (a durable commit's
            // flush, a longer transaction): 0 to 50 ms between the two, the window a reader must not read past.
            const [booking] = mine.splice(Math.floor(next() * mine.length), 1);
            const client = await slowWriters.connect();
            try {
              await client.query('begin');
              await client.query('select cancel_booking($1, $2, now())', [agent.id, booking!.id]);
              await client.query('select pg_sleep($1)', [next() * 0.05]);
              await client.query('commit');
            } finally {
              client.release();
            }
            count('cancelled, committed late');
          } else if (roll < 0.85 && soon < 40) {
            // Starts within REMINDER_LEAD_MINUTES: the reminder sweep writes booking.reminder, a writer of its own.
            const startsAt = new Date(started + 120_000 + (index * 40 + soon++) * 1_000);
            const response = await postBooking(t, agent, { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 500).toISOString() });
            expect(response.statusCode).toBe(201);
            count('created soon');
          } else {
            // Another agent of the family asks for one of this agent's bookings and gets it: events for both, in one transaction.
            const buyer = agents[(index + 1 + Math.floor(next() * (AGENTS - 1))) % AGENTS]!;
            const [booking] = mine.splice(Math.floor(next() * mine.length), 1);
            const proposal = await t.rest({ method: 'POST', url: '/api/proposals', headers: bearer(buyer.token), payload: { targetAgentId: agent.id, startsAt: booking!.startsAt, endsAt: booking!.endsAt } });
            expect(proposal.statusCode).toBe(201);
            const accepted = await t.rest({ method: 'PATCH', url: `/api/proposals/${proposal.json<{ id: string }>().id}/accept`, headers: bearer(agent.token) });
            expect(accepted.statusCode).toBe(200);
            count('transferred');
          }
          writeLatency.push(performance.now() - begun);
        }
      };

      let stop = false;
      /** Follows a feed in pages of 7 until, after `stop`, a read comes back with nothing more; answers how many pages it read. */
      const follow = async (
        read: (since: string) => Promise<{ changes: { cursor: string; agentId: string }[]; nextSince: string; hasMore: boolean }>,
        seen: { cursor: string; agentId: string }[],
        pageSize = PAGE,
      ): Promise<number> => {
        let since = '0';
        for (let pages = 1; ; pages++) {
          const finalRead = stop;
          const answer = await read(since);
          expect(answer.changes.length).toBeLessThanOrEqual(pageSize);
          seen.push(...answer.changes.map(({ cursor, agentId }) => ({ cursor, agentId })));
          since = answer.nextSince;
          if (answer.hasMore) continue;
          if (finalRead) return pages;
          await sleep(10);
        }
      };
      const familySeen: { cursor: string; agentId: string }[] = [];
      const familyReader = FAMILY_READER
        ? follow(async (since) => {
            const begun = performance.now();
            const answer = await page(api, parent, { since, limit: PAGE, family: true });
            familyReadLatency.push(performance.now() - begun);
            return answer;
          }, familySeen)
        : Promise.resolve(0);
      // Pages of 7 fall behind while 20 writers write (they catch up once they stop), and a reader that is
      // behind never reads where ids are still in flight. This one keeps up (pages of the maximum), so it
      // reads at the head all along, where a late commit of one member behind an earlier one of another is.
      const headSeen: { cursor: string; agentId: string }[] = [];
      const headReader = FAMILY_READER ? follow((since) => page(api, parent, { since, limit: 200, family: true }), headSeen, 200) : Promise.resolve(0);
      const agentSeen = agents.map(() => [] as { cursor: string; agentId: string }[]);
      const agentReaders = agents.map((agent, index) =>
        follow(async (since) => {
          const result = await t.gql(BookingChangesDocument, { since, first: PAGE }, bearer(agent.token));
          if (!result.data) throw new Error(JSON.stringify(result.errors));
          return result.data.bookingChanges;
        }, agentSeen[index]!),
      );
      // How often a writer waited on a lock a family read held (sampled).
      let samples = 0;
      let writersWaitingOnARead = 0;
      const sampler = (async () => {
        while (!stop) {
          const [row] = (
            await observer.query<{ n: number }>(
              `select count(*)::int as n from pg_stat_activity w
                where w.datname = current_database() and w.wait_event_type = 'Lock'
                  and exists (select 1 from pg_stat_activity r where r.pid = any (pg_blocking_pids(w.pid)) and r.query like '%booking_changes(%')`,
            )
          ).rows;
          samples++;
          writersWaitingOnARead += row!.n;
          await sleep(50);
        }
      })();

      const writers = Promise.all(Array.from({ length: WRITERS }, (_, index) => writer(index)));
      // A failing writer must not leave the readers running into the app's shutdown.
      writers.catch(() => (stop = true));
      await writers;
      const writingSeconds = (Date.now() - started) / 1000;

      // Everything settles: reminders due are written, every delivery is attempted (and, answered 200, delivered).
      await eventually(async () => {
        const [row] = await t.query<{ reminders: number; undelivered: number; queued: number }>(
          `select (select count(*)::int from bookings b where b.agent_id = any ($1::uuid[]) and b.status = 'confirmed'
                     and b.warning_sent_at is null and b.starts_at <= now() + interval '15 minutes' and b.starts_at > now()) as reminders,
                  (select count(*)::int from webhook_deliveries d where d.status <> 'delivered') as undelivered,
                  (select count(*)::int from webhook_fanout) as queued`,
          [agents.map((agent) => agent.id)],
        );
        return row!.reminders + row!.undelivered + row!.queued === 0 ? true : undefined;
      }, 120_000);
      stop = true;
      const [familyPages, headPages, ...agentPages] = await Promise.all([familyReader, headReader, ...agentReaders]);
      await sampler;
      await receiver.reconcile();

      const log = await t.query<{ id: string; agent_id: string; type: string }>(
        'select e.id::text as id, e.agent_id, e.type from booking_events e where e.agent_id = any ($1::uuid[]) order by e.id',
        [[parent.id, ...agents.map((agent) => agent.id)]],
      );
      const logOf = (agentId: string) => log.filter((event) => event.agent_id === agentId).map((event) => event.id);
      const deliveries = (await t.query<{ n: number }>('select count(*)::int as n from webhook_deliveries'))[0]!.n;

      // The family reader: the whole log of the family, once each, in cursor order.
      if (FAMILY_READER) {
        const whole = log.map((event) => ({ cursor: event.id, agentId: event.agent_id }));
        expect({ reader: 'family, pages of 7', seen: familySeen }).toEqual({ reader: 'family, pages of 7', seen: whole });
        expect({ reader: 'family, at the head', seen: headSeen }).toEqual({ reader: 'family, at the head', seen: whole });
      }
      for (const [index, agent] of agents.entries()) {
        // Each agent's reader and the receiver: that agent's log, once each, in order.
        expect({ agent: index, reader: agentSeen[index]!.map((change) => change.cursor) }).toEqual({ agent: index, reader: logOf(agent.id) });
        expect({ agent: index, receiver: receiver.applied.get(agent.id) }).toEqual({ agent: index, receiver: logOf(agent.id) });
      }
      expect(receiver.failures).toEqual([]);
      expect(receiver.stats.badSignatures).toBe(0);
      expect(receiver.stats.dropped).toBe(Math.floor(receiver.stats.received / DROP_EVERY));
      expect(receiver.stats.received).toBe(deliveries);
      expect(deliveries).toBe(log.length);
      // Every kind of writer wrote, the reminder sweep included.
      expect(new Set(log.map((event) => event.type))).toEqual(new Set(['booking.created', 'booking.cancelled', 'booking.transferred', 'booking.reminder']));
      expect(receiver.stats.dropped).toBeGreaterThan(0);
      // A dropped delivery is never applied from a delivery (it was answered 200, so none follows): each came from the feed.
      expect([...receiver.droppedCursors].filter((cursor) => !receiver.appliedFromFeed.has(cursor))).toEqual([]);

      const report = {
        seconds: Number(writingSeconds.toFixed(1)),
        events: log.length,
        eventsPerSecond: Math.round(log.length / writingSeconds),
        byType: Object.fromEntries([...new Set(log.map((event) => event.type))].map((type) => [type, log.filter((event) => event.type === type).length])),
        writes: Object.fromEntries(outcomes),
        writeLatency: ms(writeLatency),
        familyReads: FAMILY_READER ? ms(familyReadLatency) : 'off',
        pagesRead: { familyPagesOf7: familyPages, familyAtTheHead: headPages, agentsPagesOf7: agentPages.reduce((sum, pages) => sum + pages, 0), receiverCatchUps: receiver.stats.feedPages },
        lockSamples: { samples, writersWaitingOnAFamilyRead: writersWaitingOnARead },
        receiver: { ...receiver.stats, droppedRecoveredThroughFeed: receiver.droppedCursors.size },
      };
      console.log(`change feed under concurrent writers:\n${JSON.stringify(report, null, 2)}`);
    },
    (SECONDS + 180) * 1000,
  );
});
