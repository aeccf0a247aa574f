import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking, hourSlot } from '../../factories/bookings.js';
import { eventually } from '../../factories/webhook-receiver.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

interface FeedPage {
  changes: { cursor: string; agentId: string; type: string }[];
  nextSince: string;
  hasMore: boolean;
}

/**
 * Event ids are taken before commit. One agent's commit in id order (its row lock), but across a family
 * a writer can hold a smaller id than one already committed (Hasura #8632): a family reader that read
 * past it would hand out a `nextSince` beyond an event that commits later, and never see it. These tests
 * hold a writer open at that point, deterministically, and show the family read waiting for it
 * (`booking_changes` takes FOR SHARE on the members' rows) and answering it in order.
 */
describe('a family change feed under a writer that commits late', () => {
  let t: TestApp;
  let root: AgentWithToken;
  let writer: pg.Client;
  let hour = 0;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
    writer = new pg.Client({ connectionString: t.databaseUrl });
    await writer.connect();
  });
  afterAll(async () => {
    await writer.end();
    await t.close();
  });

  const book = (agent: AgentWithToken) => {
    const slot = hourSlot('2035-01-01T00:00:00Z', hour++);
    return createBooking(t, agent, slot.startsAt, slot.endsAt);
  };
  const read = async (agent: AgentWithToken, query: Record<string, string>): Promise<FeedPage> => {
    const response = await t.rest({ method: 'GET', url: `/api/bookings/changes?${new URLSearchParams(query)}`, headers: bearer(agent.token) });
    if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`);
    return response.json<FeedPage>();
  };
  /** Begins a cancellation of `agent`'s booking in its own transaction and stops before the commit: the event id is taken, the agent's row held. */
  const cancelUncommitted = async (agent: AgentWithToken, bookingId: string): Promise<string> => {
    await writer.query('begin');
    const { rows } = await writer.query<{ result: { events: { eventId: string }[] } }>('select cancel_booking($1, $2, now()) as result', [agent.id, bookingId]);
    return rows[0]!.result.events[0]!.eventId;
  };
  /** Starts a family read; `waiting` resolves once it waits for a row lock, or once it answered without waiting. */
  const startFamilyRead = (agent: AgentWithToken, since: string) => {
    let settled = false;
    const answer = read(agent, { since, family: 'true' }).finally(() => (settled = true));
    const waiting = eventually(async () => {
      if (settled) return 'answered without waiting';
      const rows = await t.query(
        "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%booking_changes(%'",
      );
      return rows.length > 0 ? 'waiting for a lock' : undefined;
    }, 10_000);
    return { answer, waiting };
  };
  /** Two children of a new parent, the first with the smaller id (a family read locks its members in id order). */
  const familyOfTwo = async () => {
    const parent = await createAgent(t, root);
    const children = [await createAgent(t, parent), await createAgent(t, parent)].sort((a, b) => (a.id < b.id ? -1 : 1));
    return { parent, lower: children[0]!, higher: children[1]! };
  };
  const everything = async (agents: AgentWithToken[]) =>
    (await t.query<{ id: string }>('select e.id::text as id from booking_events e where e.agent_id = any ($1::uuid[]) order by e.id', [agents.map((agent) => agent.id)])).map((row) => row.id);

  it("waits for a member's writer in flight and answers its event before a later one that committed first", async () => {
    const { parent, lower, higher } = await familyOfTwo();
    const booking = await book(lower);
    const since = (await read(parent, { family: 'true' })).nextSince;

    const late = await cancelUncommitted(lower, booking.id);
    await book(higher); // a bigger id, committed while the smaller one is still in flight
    const [early] = (await everything([higher])).slice(-1);
    expect(BigInt(early!)).toBeGreaterThan(BigInt(late));

    // One agent's feed needs no lock: it answers at once, without the uncommitted event and without passing it.
    const own = await read(lower, { since });
    expect(own).toEqual({ changes: [], nextSince: since, hasMore: false });
    expect((await read(higher, { since })).changes.map((change) => change.cursor)).toEqual([early]);

    const family = startFamilyRead(parent, since);
    const waited = await family.waiting;
    await writer.query('commit');
    const answer = await family.answer;
    // A reader that had answered [early] and nextSince = early would never see `late` (the gap).
    expect(answer.changes.map((change) => [change.cursor, change.agentId, change.type])).toEqual([
      [late, lower.id, 'booking.cancelled'],
      [early, higher.id, 'booking.created'],
    ]);
    expect(answer.nextSince).toBe(early);
    expect(waited).toBe('waiting for a lock');
  });

  it('reads a child created while it waited, so that child’s events are not passed over', async () => {
    const { parent, lower, higher } = await familyOfTwo();
    const booking = await book(lower);
    const since = (await read(parent, { family: 'true' })).nextSince;

    const late = await cancelUncommitted(lower, booking.id);
    const family = startFamilyRead(parent, since);
    await family.waiting;
    // While the read waits on `lower`: a new child books, then `higher` (not locked yet) books after it.
    const newcomer = await createAgent(t, parent);
    await book(newcomer);
    await book(higher);
    await writer.query('commit');
    const answer = await family.answer;

    const logged = await everything([parent, lower, higher, newcomer]);
    const after = logged.filter((id) => BigInt(id) > BigInt(since));
    expect(answer.changes.map((change) => change.cursor)).toEqual(after);
    expect(answer.changes.map((change) => change.agentId)).toEqual([lower.id, newcomer.id, higher.id]);
    expect(answer.changes[0]!.cursor).toBe(late);
    expect(await read(parent, { since: answer.nextSince, family: 'true' })).toEqual({ changes: [], nextSince: answer.nextSince, hasMore: false });
  });

  it("does not hold one member's writers while it waits for another member's writer", async () => {
    const { parent, lower, higher } = await familyOfTwo();
    const booking = await book(higher);
    const since = (await read(parent, { family: 'true' })).nextSince;
    const late = await cancelUncommitted(higher, booking.id);
    const family = startFamilyRead(parent, since);
    expect(await family.waiting).toBe('waiting for a lock');

    // `lower` comes first in the read's lock order: a read that held it while waiting for `higher` would
    // keep this writer waiting as long as `higher`'s writer takes to commit.
    let written = false;
    const other = book(lower).finally(() => (written = true));
    const outcome = await eventually(async () => {
      if (written) return 'written while the read waited';
      const rows = await t.query(
        "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%create_booking(%'",
      );
      return rows.length > 0 ? 'waiting behind the read' : undefined;
    }, 10_000);
    await writer.query('commit');
    await other;
    const answer = await family.answer;
    expect(outcome).toBe('written while the read waited');

    // Either order of the read and that writer, the two reads together answer each event once, in order.
    const following = await read(parent, { since: answer.nextSince, family: 'true' });
    const seen = [...answer.changes, ...following.changes];
    expect(seen.map((change) => change.cursor)).toEqual((await everything([lower, higher])).filter((id) => BigInt(id) > BigInt(since)));
    expect(seen.map((change) => [change.agentId, change.type])).toEqual([
      [higher.id, 'booking.cancelled'],
      [lower.id, 'booking.created'],
    ]);
    expect(seen[0]!.cursor).toBe(late);
  });

  it('lets writers queued behind a waiting family read go on once it is done, without a deadlock', async () => {
    const { parent, lower } = await familyOfTwo();
    const booking = await book(lower);
    const since = (await read(parent, { family: 'true' })).nextSince;
    await cancelUncommitted(lower, booking.id);
    const family = startFamilyRead(parent, since);
    expect(await family.waiting).toBe('waiting for a lock');
    // A second writer of the same agent queues behind the first (its row lock) and behind the read's share lock.
    const next = book(lower);
    await writer.query('commit');
    const [answer] = await Promise.all([family.answer, next]);
    // The read may come after the queued writer too (it let go while waiting): together, both once, in order.
    const following = await read(parent, { since: answer.nextSince, family: 'true' });
    expect([...answer.changes, ...following.changes].map((change) => change.type)).toEqual(['booking.cancelled', 'booking.created']);
  });
});
