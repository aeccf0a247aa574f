import pg from 'pg';
import type { Logger } from '../logger.js';
import { WriteBatcher } from './write-batcher.js';

export type NotificationHandler = (payload: string) => void;

/** How the LISTEN connection shows in `pg_stat_activity`. */
export const NOTIFICATIONS_APPLICATION_NAME = 'gateway-notifications';

/** Notifications sent in one statement at most (each payload is at most 8,000 bytes). */
const NOTIFY_BATCH = 500;

/**
 * One LISTEN connection per process for every channel the modules care about. PostgreSQL sends a
 * NOTIFY only when its transaction commits, to every listening process: this is how changes made on
 * one process reach subscribers and caches on the others. Reconnects after a lost connection.
 */
export class Notifications {
  private readonly handlers = new Map<string, NotificationHandler[]>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private client: pg.Client | undefined;
  private stopped = false;
  private readonly outgoing = new WriteBatcher<{ channel: string; payload: string }>((batch) => this.send(batch), NOTIFY_BATCH);

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
  ) {}

  /** Registers a handler; call before `start()`. */
  on(channel: string, handler: NotificationHandler): void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
  }

  /**
   * Called after the connection was lost and is back: notifications sent in between are gone, so
   * whoever keeps state from them must re-read it (subscriptions replay from their cursor).
   */
  onReconnect(handler: () => void): void {
    this.reconnectHandlers.push(handler);
  }

  /**
   * Sends a notification from outside any transaction: call it after your commit. PostgreSQL lets only
   * one notifying transaction commit at a time, installation-wide, so a NOTIFY inside a write
   * transaction serialises all such writes; here, notifications queued while one statement is in
   * flight leave together in the next. Best effort: while the connection is down they are dropped, so
   * a listener must be able to catch up from the data itself.
   */
  publish(channel: string, payload: string): void {
    this.outgoing.add({ channel, payload }).catch(() => undefined); // logged once per batch by send()
  }

  private async send(batch: { channel: string; payload: string }[]): Promise<void> {
    if (!this.client) {
      this.logger.debug({ dropped: batch.length }, 'notification connection down; notifications dropped');
      return;
    }
    try {
      await this.client.query('select pg_notify(n.channel, n.payload) from unnest($1::text[], $2::text[]) as n(channel, payload)', [
        batch.map((notification) => notification.channel),
        batch.map((notification) => notification.payload),
      ]);
    } catch (error) {
      this.logger.warn({ err: error, dropped: batch.length }, 'sending notifications failed');
    }
  }

  async start(): Promise<void> {
    await this.connect(false);
  }

  private async connect(reconnecting: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: NOTIFICATIONS_APPLICATION_NAME });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) {
        try {
          handler(message.payload ?? '');
        } catch (error) {
          this.logger.error({ err: error, channel: message.channel }, 'notification handler failed');
        }
      }
    });
    client.on('error', (error) => {
      if (this.stopped) return;
      this.logger.warn({ err: error }, 'notification connection lost; reconnecting');
      this.client = undefined;
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    if (reconnecting) {
      this.logger.info('notification connection restored');
      for (const handler of this.reconnectHandlers) handler();
    }
  }

  private scheduleReconnect(): void {
    setTimeout(() => {
      if (this.stopped) return;
      this.connect(true).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'reconnecting the notification connection failed; retrying');
        this.scheduleReconnect();
      });
    }, 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }
}
