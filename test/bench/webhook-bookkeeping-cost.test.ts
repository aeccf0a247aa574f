/**
 * The webhook bookkeeping (claims, attempt records) commits without waiting for a WAL flush of its
 * own: each of them is derived again from the durable event log if a crash loses it (asynchronous-commit.ts).
 * Measured as the bench measures S5 (db-cost.ts), on a durable cluster with the product's schema, against a
 * durable write of the same size next to it: each of the two writes and commits, and flushes (almost) never.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { entities, sqlDefinitions } from '../../src/modules/index.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../../src/platform/db/orm.js';
import { createLogger } from '../../src/platform/logger.js';
import { DbProbe, type DbCost } from './db-cost.js';

const OPERATIONS = 40;
const NOW = '2030-01-01T00:00:00Z';

let dataDir: string;
let database: EmbeddedDatabase;
let probe: DbProbe;
let client: pg.Client;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'bench-webhook-cost-'));
  const logger = createLogger('warn');
  database = await startEmbeddedPostgres({ dataDir, logger }); // PostgreSQL's durable defaults
  const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
  await migrate(orm, database.url, sqlDefinitions).finally(() => orm.close());
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  // One agent with one endpoint and OPERATIONS events queued for it, as create_booking leaves them.
  await client.query(`insert into agents (id, name, metadata, config, token_hash, created_at)
                      values ('00000000-0000-4000-8000-000000000001', 'a', '{}', '{}', repeat('0', 64), $1)`, [NOW]);
  await client.query(`insert into webhooks (id, agent_id, url, events, secret, created_at)
                      values (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'http://127.0.0.1:9/', '{booking.created}', 'whsec_x', $1)`, [NOW]);
  await client.query(`with e as (insert into booking_events (agent_id, type, booking_id, booking, created_at)
                                 select '00000000-0000-4000-8000-000000000001', 'booking.created', gen_random_uuid(), '{}', $1
                                   from generate_series(1, $2) returning id)
                      insert into webhook_fanout (event_id, deliveries) select id, 1 from e`, [NOW, OPERATIONS]);
  await client.query('create table durable_control (id serial primary key, note text)');
  await client.query('checkpoint');
  probe = await DbProbe.open(database.url, { settleMs: 300, sampleMs: 5 });
}, 180_000);

afterAll(async () => {
  await probe?.close();
  await client?.end();
  await database?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `operation` OPERATIONS times, one after another, and answers what that cost per operation. */
async function costOf(operation: (index: number) => Promise<unknown>): Promise<DbCost> {
  const mark = await probe.begin(true);
  for (let i = 0; i < OPERATIONS; i++) await operation(i);
  await client.query('select pg_stat_force_next_flush()');
  await client.query('select 1');
  return probe.end(mark, OPERATIONS);
}

test('claim and attempt record each commit once and leave their flush to the WAL writer; a durable write flushes', async () => {
  const control = await costOf(() => client.query(`insert into durable_control (note) values ('x')`));
  expect(control.commits).toBe(1);
  expect(control.flushes).toBeGreaterThanOrEqual(0.9);

  // One queued event a claim is leased, with its one delivery.
  type Claimed = { id: string; webhook_id: string; event_id: string; event_created_at: Date };
  const claimed: Claimed[] = [];
  const claim = await costOf(async () => {
    const { rows } = await client.query<Claimed>(
      `select id, webhook_id, event_id::text, event_created_at from claim_webhook_deliveries($1, $1::timestamptz + interval '1 minute', 1, null, '{}', '{}', 100)`,
      [NOW],
    );
    expect(rows).toHaveLength(1);
    claimed.push(rows[0]!);
  });
  expect(claim.commits).toBe(1);
  expect(claim.flushes).toBeLessThan(0.5);

  // Each attempt's outcome recorded: the delivery written delivered, its attempt row written, the event off the queue.
  const record = await costOf(async (index) => {
    const { id, webhook_id, event_id, event_created_at } = claimed[index]!;
    const outcome = {
      delivery_id: id,
      webhook_id,
      event_id,
      event_created_at,
      attempt: 1,
      attempted_at: NOW,
      status_code: 204,
      error: null,
      duration_ms: 3,
      status: 'delivered',
      next_attempt_at: null,
      finished_at: NOW,
      completes_event: true,
    };
    await client.query('select from record_webhook_attempts($1::jsonb, 5)', [JSON.stringify([outcome])]);
  });
  expect(record.commits).toBe(1);
  expect(record.flushes).toBeLessThan(0.5);
  const { rows } = await client.query<{ delivered: string; attempts: string; queued: string }>(
    `select (select count(*) from webhook_deliveries where status = 'delivered') as delivered, (select count(*) from webhook_attempts) as attempts,
            (select count(*) from webhook_fanout) as queued`,
  );
  expect(rows[0]).toEqual({ delivered: String(OPERATIONS), attempts: String(OPERATIONS), queued: '0' });
}, 120_000);
