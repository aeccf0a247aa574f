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

  async start(): Promise<void> {
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
      setTimeout(() => void this.start().catch((retry: unknown) => this.logger.error({ err: retry }, 'reconnecting failed')), 1000).unref();
    });
    await client.connect();
    for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
    this.client = client;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }
}
