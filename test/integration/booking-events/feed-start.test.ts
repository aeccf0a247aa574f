import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BookingEventBus, FEED_CHECK_INTERVAL_MS } from '../../../src/modules/booking-events/booking-event-bus.js';
import { LATEST_EVENTS } from '../../../src/modules/booking-events/sql/booking-event.sql.js';
import { AfterCommit } from '../../../src/platform/db/after-commit.js';
import { Notifications } from '../../../src/platform/db/notifications.js';
import { Statements } from '../../../src/platform/db/statements.js';
import { createLogger } from '../../../src/platform/logger.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { startTestApp, type TestApp } from '../../harness.js';

/**
 * Where the live feeds of many agents start (booking-event-bus.ts): the bus of one process over the
 * test database, its announcements left out (the LISTEN connection is never started), so that what it
 * delivers it found in the log.
 */
describe('live feeds starting together', () => {
  const AGENTS = 30;
  let t: TestApp;
  let bus: BookingEventBus;
  let agents: AgentWithToken[];

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    const root = await bootstrapAgent(t);
    agents = [];
    for (let i = 0; i < AGENTS; i++) agents.push(await createAgent(t, root));
    const logger = createLogger('silent');
    const statements = await Statements.forOrm(t.orm);
    bus = new BookingEventBus(new Notifications(t.databaseUrl, t.config.databaseTimeouts, logger), new AfterCommit(statements.pool, logger), statements, logger);
  });
  afterAll(async () => {
    bus.close();
    await t.close();
  });

  /** Writes an event to an agent's log as a writer does, without announcing it; answers its cursor. */
  const writeEvent = async (agent: AgentWithToken) => {
    // record_booking_event takes the booking row and writes its payload with booking_item(): a row that is never stored.
    const [row] = await t.query<{ cursor: string }>(
      `select record_booking_event($1, 'booking.reminder',
                jsonb_populate_record(null::bookings, jsonb_build_object('id', $1::uuid, 'agent_id', $1::uuid, 'starts_at', '2033-01-01T09:00:00Z',
                  'ends_at', '2033-01-01T10:00:00Z', 'status', 'confirmed', 'created_at', now())), now()) ->> 'eventId' as cursor`,
      [agent.id],
    );
    return row!.cursor;
  };

  it(`reads where ${AGENTS} agents' feeds start in one statement, and each starts at its own agent's newest event`, async () => {
    // Logs of different lengths: a feed that started at another agent's cursor would replay or skip.
    for (const [index, agent] of agents.entries()) for (let i = 0; i < index % 3; i++) await writeEvent(agent);
    t.sql.reset();
    const streams = agents.map((agent) => bus.subscribe(agent.id, undefined));
    const received = streams.map((stream) => stream.next());
    // Settles once every feed has started, with one more read of the newest cursors.
    await bus.subscriberLag();
    const reads = t.sql.statements.filter((sql) => sql === LATEST_EVENTS.text).length;
    // The feeds' start and the lag read; a third if the feeds' periodic check came in between.
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThanOrEqual(3);

    const [first, second, third] = agents;
    const written = [await writeEvent(first!), await writeEvent(second!), await writeEvent(third!)];
    const delivered = await Promise.all(received.slice(0, 3));
    expect(delivered.map((result) => result.value?.cursor)).toEqual(written);
    await new Promise((resolve) => setTimeout(resolve, FEED_CHECK_INTERVAL_MS + 500));
    // Nothing else: no agent got an event from before it subscribed.
    let settled = 0;
    received.slice(3).forEach((next) => void next.then(() => settled++));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(0);
    await Promise.all(streams.map((stream) => stream.return(undefined)));
  }, 30_000);
});
