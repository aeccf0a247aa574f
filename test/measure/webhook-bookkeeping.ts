/**
 * Times the webhook bookkeeping statements (attempt record, claim), one connection, on
 * S5's shape: 1,000 agents with 10 endpoints each, a backlog of pending deliveries, most delivered.
 * `node --import @swc-node/register/esm-register test/measure/webhook-bookkeeping.ts [backlog]`
 */
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { entities, sqlDefinitions } from '../../src/modules/index.js';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../../src/platform/db/orm.js';
import { createLogger } from '../../src/platform/logger.js';

const backlog = Number(process.argv[2] ?? 25_000);
const logger = createLogger('warn');
const dataDir = await mkdtemp(join(tmpdir(), 'measure-webhooks-'));
const database = await startEmbeddedPostgres({ dataDir, logger, ephemeral: true });
try {
  const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
  await migrate(orm, database.url, sqlDefinitions).finally(() => orm.close());
  const client = new pg.Client({ connectionString: database.url });
  client.on('error', () => undefined);
  await client.connect();
  const now = '2030-01-01T00:00:00Z';
  await client.query(`insert into agents (id, name, metadata, config, token_hash, created_at)
                      values ('00000000-0000-4000-8000-000000000000', 'root', '{}', '{}', repeat('f', 64), $1)`, [now]);
  await client.query(`insert into agents (id, name, metadata, config, token_hash, parent_id, created_at)
                      select gen_random_uuid(), 'a' || i, '{}', '{}', md5(i::text) || md5(i::text), '00000000-0000-4000-8000-000000000000', $1
                        from generate_series(1, 999) i`, [now]);
  await client.query(`insert into webhooks (id, agent_id, url, events, secret, created_at)
                      select gen_random_uuid(), a.id, 'http://127.0.0.1:9/', '{booking.created}', 'whsec_x', $1 from agents a, generate_series(1, 10)`, [now]);
  // 6,000 events (60,000 deliveries), of which `backlog` still pending.
  await client.query(`insert into booking_events (agent_id, type, booking_id, booking, created_at)
                      select a.id, 'booking.created', gen_random_uuid(), '{"id":"x"}', $1::timestamptz + (i || ' ms')::interval
                        from agents a, generate_series(1, 6) i`, [now]);
  await client.query(`insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, delivered_at)
                      select gen_random_uuid(), w.id, e.id, 'delivered', 1, null, e.created_at, e.created_at
                        from booking_events e join webhooks w on w.agent_id = e.agent_id`);
  await client.query(`update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = created_at, delivered_at = null
                       where id in (select id from webhook_deliveries order by created_at desc limit $1)`, [backlog]);
  await client.query('vacuum analyze');
  const later = '2030-01-02T00:00:00Z';
  const claimed = (await client.query<{ id: string; webhook_id: string; event_id: string; event_created_at: Date }>(
    `select id, webhook_id, event_id::text, event_created_at from claim_webhook_deliveries($1, $2, 10, null, '{}', '{}', 4)`, [later, '2030-01-03T00:00:00Z'])).rows;
  const outcomes = claimed.map(({ id, webhook_id, event_id, event_created_at }) => ({
    delivery_id: id, webhook_id, event_id, event_created_at, attempt: 1, attempted_at: later, status_code: 204, error: null, duration_ms: 3,
    status: 'delivered', next_attempt_at: null, finished_at: later, completes_event: false,
  }));
  const time = async (label: string, sql: string, params: unknown[], runs = 50) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) {
      await client.query('begin');
      await client.query(sql, params);
      await client.query('rollback');
    }
    console.log(`${label}: ${(Number(process.hrtime.bigint() - started) / 1e6 / runs).toFixed(3)} ms a call (${runs} calls, begin/rollback around each)`);
  };
  await time('begin/select 1/rollback (the round trips around each)', 'select 1', []);
  await time('record_webhook_attempts (10 outcomes)', 'select from record_webhook_attempts($1::jsonb, 5)', [JSON.stringify(outcomes)]);
  await time('claim_webhook_deliveries (10)', `select * from claim_webhook_deliveries($1, $2, 10, null, '{}', '{}', 4)`, [later, '2030-01-03T00:00:00Z']);
  await client.end();
} catch (error) {
  console.error(error);
} finally {
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
