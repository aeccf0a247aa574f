import pg from 'pg';
import type { Logger } from '../logger.js';
import { closeWhenSilent, connectionSettings, dropConnection, type DatabaseTimeouts } from './timeouts.js';

export type NotificationHandler = (payload: string) => void;

/** How the LISTEN connection shows in `pg_stat_activity`. */
export const NOTIFICATIONS_APPLICATION_NAME = 'gateway-notifications';

/** How long closing the connection may take on shutdown before it is dropped. */
const STOP_WAIT_MS = 1_000;

export interface NotificationTiming {
  /** How often the LISTEN connection must answer a query to count as alive. */
  heartbeatIntervalMs: number;
  /** How long it has to answer. */
  heartbeatTimeoutMs: number;
  /** The pause before each attempt to connect again. */
  reconnectDelayMs: number;
}

/**
 * A connection that stopped answering (a frozen server, a black-holed network) raises no error: TCP
 * keepalive probes are answered by the peer's kernel, and a LISTEN connection sends nothing of its
 * own. Only asking it something shows it is gone: live events then stop for at most about 8 s.
 */
export const DEFAULT_NOTIFICATION_TIMING: NotificationTiming = { heartbeatIntervalMs: 5_000, heartbeatTimeoutMs: 3_000, reconnectDelayMs: 1_000 };

/**
 * One LISTEN connection per process for every channel the modules care about. PostgreSQL sends a
 * NOTIFY only when its transaction commits, to every listening process: this is how changes made on
 * one process reach subscribers and caches on the others. A connection that errs, ends or misses a
 * heartbeat is dropped and replaced by one reconnect loop. Notifications are sent by AfterCommit
 * (after-commit.ts), from the pool, with the consistency tokens of the same writes.
 */
export class Notifications {
  private readonly handlers = new Map<string, NotificationHandler[]>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private client: pg.Client | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** When the statement now running on a connection was sent: `pg` 9 refuses a second one beside it. */
  private readonly busySince = new WeakMap<pg.Client, number>();
  private readonly lastStatement = new WeakMap<pg.Client, Promise<unknown>>();

  constructor(
    private readonly connectionString: string,
    private readonly timeouts: DatabaseTimeouts,
    private readonly logger: Logger,
    private readonly timing: NotificationTiming = DEFAULT_NOTIFICATION_TIMING,
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
    const client = new pg.Client({
      ...connectionSettings(this.timeouts),
      connectionString: this.connectionString,
      application_name: NOTIFICATIONS_APPLICATION_NAME,
    });
    closeWhenSilent(client);
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) {
        try {
          handler(message.payload ?? '');
        } catch (error) {
          this.logger.error({ err: error, channel: message.channel }, 'notification handler failed');
        }
      }
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the connection ended')));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
    } catch (error) {
      dropConnection(client);
      throw error;
    }
    if (this.stopped) {
      dropConnection(client);
      return;
    }
    this.client = client;
    this.heartbeat = setInterval(() => void this.checkAlive(client), this.timing.heartbeatIntervalMs).unref();
    if (reconnecting) {
      this.logger.info('notification connection restored');
      for (const handler of this.reconnectHandlers) {
        // A failing handler must not fail the reconnect (which would start a second loop).
        try {
          handler();
        } catch (error) {
          this.logger.error({ err: error }, 'a reconnect handler failed');
        }
      }
    }
  }

  /**
   * A statement already under way is the probe: the heartbeat waits for none beside it, but gives the
   * connection up once that statement has gone unanswered for as long as a heartbeat may.
   */
  private async checkAlive(client: pg.Client): Promise<void> {
    const busySince = this.busySince.get(client);
    if (busySince !== undefined) {
      if (Date.now() - busySince > this.timing.heartbeatTimeoutMs) this.lost(client, new Error('a statement went unanswered past the heartbeat timeout'));
      return;
    }
    try {
      // `pg` reads a per-query `query_timeout`; its types do not list it.
      await this.oneAtATime(client, () => client.query({ text: 'select 1', query_timeout: this.timing.heartbeatTimeoutMs } as pg.QueryConfig));
    } catch (error) {
      this.lost(client, error);
    }
  }

  /** Runs a statement once the connection's previous one has been answered. */
  private async oneAtATime<T>(client: pg.Client, statement: () => Promise<T>): Promise<T> {
    const previous = this.lastStatement.get(client);
    const run = (async () => {
      await previous?.catch(() => undefined);
      this.busySince.set(client, Date.now());
      try {
        return await statement();
      } finally {
        this.busySince.delete(client);
      }
    })();
    this.lastStatement.set(client, run);
    return run;
  }

  /** The one way a connection is given up, whichever of an error, its end or a missed heartbeat comes first. */
  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client || this.stopped) return;
    this.client = undefined;
    clearInterval(this.heartbeat);
    dropConnection(client);
    this.logger.warn({ err: error }, 'notification connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.stopped) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.stopped) return;
      this.connect(true).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'reconnecting the notification connection failed; retrying');
        this.scheduleReconnect();
      });
    }, this.timing.reconnectDelayMs).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // `end()` waits for the server to close its side, which a frozen server never does.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)));
    await Promise.race([client.end().catch(() => undefined), late]).finally(() => clearTimeout(timer));
    dropConnection(client);
  }
}
