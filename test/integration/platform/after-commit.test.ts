import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { AfterCommit } from '../../../src/platform/db/after-commit.js';
import { parseWalPosition } from '../../../src/platform/db/wal-position.js';
import { startTestApp, type TestApp } from '../../harness.js';

const CHANNEL = 'after_commit_test';

/**
 * What follows a commit (the NOTIFYs of booking events, the consistency tokens of the writes) leaves in one
 * statement for everything queued together, on a real pool, heard by a real LISTEN connection.
 */
describe('after commit', () => {
  let t: TestApp;
  let pool: pg.Pool;
  let listener: pg.Client;
  let statementsSent: number;
  const heard: string[] = [];
  const logged: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _encoding, done) => (logged.push(String(chunk)), done()) }));

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    pool = new pg.Pool({ connectionString: t.databaseUrl, max: 2 });
    // Counts the statements the class sends: each on a connection it takes from the pool for it.
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => (statementsSent++, query(...args));
    });
    listener = new pg.Client({ connectionString: t.databaseUrl });
    await listener.connect();
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`listen ${CHANNEL}`);
  });
  afterAll(async () => {
    await listener.end();
    await pool.end();
    await t.close();
  });

  const remembered = async (credential: string) =>
    (await t.query<{ position: string }>('select position::text as position from consistency_tokens where credential_hash = $1', [credential]))[0]?.position;
  const position = (token: string) => parseWalPosition(token)!;

  it('sends the notifications and the tokens queued together in one statement, the tokens after the commits, remembered per credential', async () => {
    const afterCommit = new AfterCommit(pool, logger);
    const [before] = await t.query<{ position: string }>('select pg_current_wal_insert_lsn()::text as position');
    heard.length = 0;
    statementsSent = 0;
    afterCommit.notify(CHANNEL, 'one');
    afterCommit.notify(CHANNEL, 'two');
    // One caller's writes finishing together name its credential twice in one batch.
    const tokens = await Promise.all([
      afterCommit.walPositionAfterCommit('credential-a'),
      afterCommit.walPositionAfterCommit('credential-b'),
      afterCommit.walPositionAfterCommit('credential-a'),
      afterCommit.walPositionAfterCommit(undefined),
    ]);
    expect(statementsSent).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    expect(position(tokens[0]!)).toBeGreaterThan(position(before!.position));
    expect(await remembered('credential-a')).toBe(tokens[0]);
    expect(await remembered('credential-b')).toBe(tokens[0]);
    for (let waited = 0; heard.length < 2 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual(['one', 'two']);
  });

  it('answers the tokens when PostgreSQL refuses a notification of their batch, and drops that batch’s notifications with a warning', async () => {
    const afterCommit = new AfterCommit(pool, logger);
    heard.length = 0;
    logged.length = 0;
    afterCommit.notify(CHANNEL, 'fine');
    afterCommit.notify(CHANNEL, 'x'.repeat(8000)); // over PostgreSQL's payload limit
    const token = await afterCommit.walPositionAfterCommit('credential-c');
    expect(await remembered('credential-c')).toBe(token);
    expect(logged.join('')).toMatch(/sending notifications failed/);
    expect(logged.join('')).toMatch(/"dropped":2/);
    // The batch's other notification is gone with it; the next batch is sent as usual.
    afterCommit.notify(CHANNEL, 'next');
    await afterCommit.flush();
    for (let waited = 0; heard.length < 1 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual(['next']);
  });

  it('fails the tokens at once when the database cannot be reached, without sending the statement twice', async () => {
    const unreachable = new pg.Pool({ connectionString: 'postgres://nobody:nothing@127.0.0.1:9/none', connectionTimeoutMillis: 2_000 });
    let attempts = 0;
    unreachable.on('error', () => undefined);
    const connect = unreachable.connect.bind(unreachable) as () => Promise<pg.PoolClient>;
    (unreachable as unknown as { connect: () => Promise<pg.PoolClient> }).connect = () => (attempts++, connect());
    try {
      const afterCommit = new AfterCommit(unreachable, logger);
      afterCommit.notify(CHANNEL, 'lost');
      await expect(afterCommit.walPositionAfterCommit('credential-d')).rejects.toThrow(/ECONNREFUSED|connect/);
      expect(attempts).toBe(1);
    } finally {
      await unreachable.end();
    }
  });

  it('a batch of notifications only that fails throws nowhere', async () => {
    const afterCommit = new AfterCommit(pool, logger);
    logged.length = 0;
    afterCommit.notify(CHANNEL, 'x'.repeat(8000));
    await afterCommit.flush();
    expect(logged.join('')).toMatch(/"dropped":1/);
  });
});
