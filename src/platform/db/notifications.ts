import pg from 'pg';
import type { Logger } from '../logger.js';

export type NotificationHandler = (payload: string) => void;

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

  async start(): Promise<void> {
    await this.connect(false);
  }

  private async connect(reconnecting: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
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
