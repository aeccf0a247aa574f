import DataLoader from 'dataloader';
import type { AfterCommit } from '../../platform/db/after-commit.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import type { Logger } from '../../platform/logger.js';
import { isoFromTimestamptz } from '../../platform/db/pg-timestamp.js';
import type { AnnouncedEvent, BookingEventView, CommittedEvents, EventAnnouncer } from '../bookings/index.js';
import { EVENTS_AFTER, LATEST_EVENTS, type BookingEventRow } from './sql/booking-event.sql.js';
import { AgentFanOut } from './fan-out.js';
import { SubscriberStream } from './subscriber-stream.js';


export const BOOKING_EVENTS_CHANNEL = 'booking_events';

/** How often live agent feeds compare themselves with the log, in case an announcement was lost. */
export const FEED_CHECK_INTERVAL_MS = 2_000;
const LOG_PAGE = 200;
/** Feeds started by one read of the newest cursors (an array parameter of that many agent ids). */
export const FEED_STARTS_PER_READ = 500;

/** What one announcement carries to the other processes: the event as it was announced here. */
type NotifiedEvent = AnnouncedEvent;

function fromRow(row: BookingEventRow): BookingEventView {
  return { cursor: row.id, agentId: row.agent_id, type: row.type, createdAt: isoFromTimestamptz(row.created_at), booking: row.booking, previous: row.previous };
}

/**
 * One agent's live events in this process, without gap or duplicate: an announced event whose
 * predecessor is the last one handed out goes straight to the listeners; anything else (a lost or
 * late announcement, a reconnect) makes the feed read the log from its last cursor. One read per
 * agent and process, however many subscribers.
 */
class AgentFeed {
  last = 0n;
  /** Set when the last subscriber left: a read still in flight must not emit into a newer feed's channel. */
  closed = false;
  private reading: Promise<void> | undefined;
  private readAgain = false;

  constructor(
    readonly agentId: string,
    private readonly deliver: (event: BookingEventView, cursor: bigint) => void,
    private readonly readLog: (agentId: string, after: bigint) => Promise<BookingEventView[]>,
    private readonly logger: Logger,
  ) {}

  offer(event: AnnouncedEvent): void {
    if (this.closed) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    const cursor = BigInt(event.cursor);
    if (cursor <= this.last) return;
    if (BigInt(event.previousCursor ?? 0) === this.last) {
      this.last = cursor;
      this.deliver(event, cursor);
      return;
    }
    this.catchUp();
  }

  catchUp(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      try {
        do {
          this.readAgain = false;
          for (;;) {
            const events = await this.readLog(this.agentId, this.last);
            if (this.closed) return;
            for (const event of events) {
              this.last = BigInt(event.cursor);
              this.deliver(event, this.last);
            }
            if (events.length < LOG_PAGE) break;
          }
        } while (this.readAgain);
      } catch (error) {
        this.logger.warn({ err: error, agentId: this.agentId }, 'reading the booking event log failed; the next check retries');
      } finally {
        this.reading = undefined;
      }
    })();
  }
}

/**
 * The live side of booking events. A write announces its committed events here: this process's
 * subscribers get them at once, and one coalesced NOTIFY carries them to every other process. Each
 * process keeps one feed per agent with subscribers (see AgentFeed); every feed also compares itself
 * with the log every few seconds, so an announcement lost with a crashed writer is late, never lost.
 */
export class BookingEventBus implements EventAnnouncer {
  private readonly feeds = new Map<string, Promise<AgentFeed>>();
  /**
   * Where new feeds start: the newest cursor of each agent, read for all the feeds that start in one
   * turn of the event loop together (when every client reconnects after a deploy, 100 agents' feeds
   * start within a few turns), not one statement each.
   */
  private readonly newestCursors = new DataLoader<string, bigint>(
    async (agentIds) => {
      const newest = new Map((await this.statements.rows(LATEST_EVENTS, [[...agentIds]])).map((row) => [row.agent_id, BigInt(row.latest ?? 0)]));
      return agentIds.map((agentId) => newest.get(agentId) ?? 0n);
    },
    { cache: false, maxBatchSize: FEED_STARTS_PER_READ, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
  );
  private readonly subscribers = new Map<string, AgentFanOut>();
  private readonly checkTimer: NodeJS.Timeout;
  private onDeliveries: () => void = () => undefined;
  /** The newest event id this process has handed to a subscriber (metrics). */
  lastDeliveredCursor = 0n;

  constructor(
    notifications: Notifications,
    private readonly afterCommit: AfterCommit,
    private readonly statements: Statements,
    private readonly logger: Logger,
  ) {
    notifications.on(BOOKING_EVENTS_CHANNEL, (payload) => {
      const event = JSON.parse(payload) as NotifiedEvent;
      this.offer(event);
    });
    // Announcements sent while the connection was down are gone: every feed reads the log.
    notifications.onReconnect(() => void this.checkFeeds(true));
    this.checkTimer = setInterval(() => void this.checkFeeds(false), FEED_CHECK_INTERVAL_MS).unref();
  }

  /** Who sends webhook deliveries when a write created some (the dispatcher). */
  onDeliveriesCommitted(kick: () => void): void {
    this.onDeliveries = kick;
  }

  /** Call after the commit that wrote `committed`. */
  announce(committed: CommittedEvents): void {
    for (const event of committed.events) {
      this.offer(event);
      this.afterCommit.notify(
        BOOKING_EVENTS_CHANNEL,
        JSON.stringify({
          cursor: event.cursor,
          previousCursor: event.previousCursor,
          agentId: event.agentId,
          type: event.type,
          createdAt: event.createdAt,
          booking: event.booking,
          previous: event.previous,
        } satisfies NotifiedEvent),
      );
    }
    if (committed.deliveries > 0) this.onDeliveries();
  }

  /** Ends every live subscription (shutdown). */
  close(): void {
    clearInterval(this.checkTimer);
    for (const fanOut of this.subscribers.values()) fanOut.end();
  }

  /**
   * Events of one agent, from `after` (exclusive) if given: first what is already in the log, then
   * live, with no gap and no duplicate. The subscriber is listening before the log is read; anything
   * seen in both is dropped by cursor (one agent's cursors commit in order, see `record_booking_event`).
   * `return()` ends the stream at once, also while it waits for an event. `connection` (any key)
   * groups the subscriptions of one client connection, so that each event reaches them together.
   */
  subscribe(agentId: string, after: string | undefined, connection?: unknown): AsyncGenerator<BookingEventView, undefined, undefined> {
    let fanOut = this.subscribers.get(agentId);
    if (!fanOut) this.subscribers.set(agentId, (fanOut = new AgentFanOut()));
    const group = connection ?? {};
    const stream: SubscriberStream = new SubscriberStream(
      (setLast) => this.replay(agentId, after, setLast),
      () => this.leave(agentId, stream, group),
    );
    fanOut.add(stream, group);
    return stream;
  }

  private async *replay(agentId: string, after: string | undefined, setLast: (cursor: bigint) => void): AsyncGenerator<BookingEventView, void, undefined> {
    const feed = await this.feed(agentId);
    // Without `after`, the stream starts now.
    let last = after === undefined ? feed.last : BigInt(after);
    setLast(last);
    if (after === undefined) return;
    for (;;) {
      const events = await this.readLog(agentId, last);
      for (const event of events) {
        last = BigInt(event.cursor);
        yield event;
      }
      if (events.length < LOG_PAGE) return;
    }
  }

  private leave(agentId: string, stream: SubscriberStream, connection: unknown): void {
    const fanOut = this.subscribers.get(agentId);
    if (!fanOut?.remove(stream, connection) || fanOut.size > 0) return;
    this.subscribers.delete(agentId);
    void this.feeds.get(agentId)?.then((feed) => (feed.closed = true), () => undefined);
    this.feeds.delete(agentId);
  }

  private deliver(agentId: string, event: BookingEventView, cursor: bigint): void {
    const fanOut = this.subscribers.get(agentId);
    if (!fanOut) return;
    fanOut.deliver(event, cursor);
    if (cursor > this.lastDeliveredCursor) this.lastDeliveredCursor = cursor;
  }

  /**
   * How far this process's subscribers are behind the log: over the agents with subscribers here,
   * the largest gap between the agent's newest event id and the last one handed to its feed; 0 when
   * every feed is caught up. In event ids, which are shared by all agents, so an upper bound on the
   * number of events, not a count.
   */
  async subscriberLag(): Promise<bigint> {
    if (this.feeds.size === 0) return 0n;
    const feeds = await Promise.all([...this.feeds.values()].map((feed) => feed.catch(() => undefined)));
    const started = feeds.filter((feed): feed is AgentFeed => feed !== undefined);
    if (started.length === 0) return 0n;
    const lastByAgent = new Map(started.map((feed) => [feed.agentId, feed.last]));
    let lag = 0n;
    for (const row of await this.statements.rows(LATEST_EVENTS, [[...lastByAgent.keys()]])) {
      const behind = BigInt(row.latest ?? 0) - (lastByAgent.get(row.agent_id) ?? 0n);
      if (behind > lag) lag = behind;
    }
    return lag;
  }

  private offer(event: AnnouncedEvent): void {
    void this.feeds.get(event.agentId)?.then(
      (feed) => feed.offer(event),
      () => undefined, // the feed could not start; its subscribers already got the error
    );
  }

  private feed(agentId: string): Promise<AgentFeed> {
    let feed = this.feeds.get(agentId);
    if (!feed) {
      feed = (async () => {
        const created = new AgentFeed(agentId, (event, cursor) => this.deliver(agentId, event, cursor), (id, after) => this.readLog(id, after), this.logger);
        created.last = await this.newestCursors.load(agentId);
        return created;
      })();
      this.feeds.set(agentId, feed);
      feed.catch(() => this.feeds.delete(agentId));
    }
    return feed;
  }

  private async readLog(agentId: string, after: bigint): Promise<BookingEventView[]> {
    return (await this.statements.rows(EVENTS_AFTER, [agentId, String(after), LOG_PAGE])).map(fromRow);
  }

  /** Reads the log for every feed that is behind it (or for all of them after a reconnect). */
  private async checkFeeds(all: boolean): Promise<void> {
    if (this.feeds.size === 0) return;
    try {
      const feeds = await Promise.all([...this.feeds.values()]);
      if (all) {
        for (const feed of feeds) feed.catchUp();
        return;
      }
      const latest = new Map(
        (await this.statements.rows(LATEST_EVENTS, [feeds.map((feed) => feed.agentId)])).map((row) => [row.agent_id, BigInt(row.latest ?? 0)]),
      );
      for (const feed of feeds) if ((latest.get(feed.agentId) ?? 0n) > feed.last) feed.catchUp();
    } catch (error) {
      this.logger.warn({ err: error }, 'checking live booking feeds against the log failed');
    }
  }
}
