import type pg from 'pg';
import type { Logger } from '../logger.js';
import { isServerError } from './pg-errors.js';
import { WriteBatcher } from './write-batcher.js';

/** Items sent in one statement at most (a notification's payload is at most 8,000 bytes). */
const AFTER_COMMIT_BATCH = 500;

/** One thing to do once a write committed. */
type AfterCommitItem =
  | { readonly notification: { readonly channel: string; readonly payload: string } }
  /** A write's consistency token: the WAL position now, remembered for the credential when there is one. */
  | { readonly token: { readonly credentialKey: string | undefined } };

/**
 * What follows a commit, sent in one statement for every write that finished meanwhile (WriteBatcher):
 * the NOTIFYs that tell the other processes (booking events), and the WAL position that answers the
 * writes' consistency tokens, remembered per credential (read-your-writes.ts). Both must leave after
 * the commit and neither needs to be durable, so one round trip and one commit record (without a WAL
 * flush: its only WAL is that record and unlogged rows) carries a burst of writes' worth of both; apart
 * they cost two statements and two commit records per batch (S1: 1.50 commit records per create).
 *
 * A NOTIFY is not sent inside the write's transaction: PostgreSQL lets one notifying transaction commit
 * at a time, installation-wide, so every write would queue behind every other's commit.
 *
 * A notification PostgreSQL refuses (a payload over its limit, a full notification queue) must not cost a
 * write its answer: the statement is then sent again without the notifications, which are dropped and
 * logged. Notifications are best effort anyway: a listener catches up from the data itself. Any other
 * failure (the database unreachable) fails the batch's tokens at once, as a write's own statement would.
 */
export class AfterCommit {
  private readonly batcher = new WriteBatcher<AfterCommitItem, string>((items) => this.send(items), AFTER_COMMIT_BATCH);

  constructor(
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
  ) {}

  /** Sends a NOTIFY on `channel`, best effort; call it after your commit. */
  notify(channel: string, payload: string): void {
    this.batcher.add({ notification: { channel, payload } }).catch(() => undefined); // logged once per batch by send()
  }

  /** The WAL position once the caller's commit is in, remembered for `credentialKey` (a consistency token). */
  walPositionAfterCommit(credentialKey: string | undefined): Promise<string> {
    return this.batcher.add({ token: { credentialKey } });
  }

  /** Waits until everything queued so far is sent. */
  async flush(): Promise<void> {
    await this.batcher.flush();
  }

  private async send(items: AfterCommitItem[]): Promise<string> {
    const notifications = items.flatMap((item) => ('notification' in item ? [item.notification] : []));
    const credentials = [...new Set(items.flatMap((item) => ('token' in item && item.token.credentialKey !== undefined ? [item.token.credentialKey] : [])))];
    try {
      return await this.statement(credentials, notifications);
    } catch (error) {
      if (notifications.length > 0) this.logger.warn({ err: error, dropped: notifications.length }, 'sending notifications failed');
      const refusedNotification = notifications.length > 0 && isServerError(error);
      if (!refusedNotification || notifications.length === items.length) throw error;
      return this.statement(credentials, []);
    }
  }

  private async statement(credentials: string[], notifications: { channel: string; payload: string }[]): Promise<string> {
    // Not `pool.query`: it discards the connection on any error, and a refused notification leaves it as good as it was.
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const { rows } = await client.query<{ position: string }>({
        name: 'after_commit',
        text: `with now_at as (select pg_current_wal_insert_lsn() as position),
                  remembered as (
                    insert into consistency_tokens (credential_hash, position, written_at)
                    select credential, now_at.position, now() from unnest($1::text[]) as credential, now_at
                    on conflict (credential_hash) do update
                      set position = greatest(consistency_tokens.position, excluded.position), written_at = excluded.written_at
                    returning 1),
                  notified as (select count(pg_notify(n.channel, n.payload)) as sent from unnest($2::text[], $3::text[]) as n(channel, payload))
               select now_at.position::text as position from now_at, notified`,
        values: [credentials, notifications.map((notification) => notification.channel), notifications.map((notification) => notification.payload)],
      });
      return rows[0]!.position;
    } catch (error) {
      if (!isServerError(error)) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
