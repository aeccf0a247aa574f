/**
 * What the database spends per webhook delivery on the dispatcher's bookkeeping alone (no HTTP): S5's shape
 * (1,000 agents, 10 endpoints each), `EVENTS` events queued as create_booking leaves them, then the
 * dispatcher's cycle on one connection until every delivery is recorded: claim 32 places, record the
 * outcomes ten at a time (and, before deliveries were written at their first outcome, the fan-out whenever a
 * claim came up short). Durable cluster; the backend's CPU from /proc, WAL from pg_current_wal_lsn.
 * `node --import @swc-node/register/esm-register test/measure/webhook-delivery-cycle.ts [events]`
 * RECORD_BATCH (10) outcomes per record call; MEASURE_STATS=1 prints pg_stat_statements (nested statements
 * included) for the cycle; MEASURE_SQL runs before it (an experiment: `alter function … set …`, a dropped index).
 */
import 'reflect-metadata';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { entities, sqlDefinitions } from '../../src/modules/index.js';
import { startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../../src/platform/db/orm.js';
import { createLogger } from '../../src/platform/logger.js';

const EVENTS = Number(process.argv[2] ?? 3_000);
const PLACES = 32;
const RECORD_BATCH = Number(process.env.RECORD_BATCH ?? 10);
const logger = createLogger('warn');
const dataDir = await mkdtemp(join(tmpdir(), 'measure-delivery-cycle-'));
const database = await startEmbeddedPostgres({ dataDir, logger, statementStats: Boolean(process.env.MEASURE_STATS) });
const ticks = async (pid: number) => {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (1/100 s)
};
try {
  const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
  await migrate(orm, database.url, sqlDefinitions).finally(() => orm.close());
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const now = '2030-01-01T00:00:00Z';
  await client.query(`insert into agents (id, name, metadata, config, token_hash, created_at) values ('00000000-0000-4000-8000-000000000000', 'root', '{}', '{}', repeat('f', 64), $1)`, [now]);
  await client.query(`insert into agents (id, name, metadata, config, token_hash, parent_id, created_at) select gen_random_uuid(), 'a' || i, '{}', '{}', md5(i::text) || md5(i::text), '00000000-0000-4000-8000-000000000000', $1 from generate_series(1, 999) i`, [now]);
  await client.query(`insert into webhooks (id, agent_id, url, events, secret, created_at) select gen_random_uuid(), a.id, 'http://127.0.0.1:9/', '{booking.created}', 'whsec_x', $1 from agents a, generate_series(1, 10)`, [now]);
  await client.query(`insert into booking_events (agent_id, type, booking_id, booking, created_at)
                      select a.id, 'booking.created', gen_random_uuid(), '{"id":"00000000-0000-4000-8000-000000000009"}', $1::timestamptz + (i || ' ms')::interval
                        from generate_series(1, $2::int) i join (select id, row_number() over (order by id) as n from agents) a on a.n = 1 + i % 1000`, [now, EVENTS]);
  // A steady state: the deliveries of 3,000 earlier events on record (an empty table's plans would scan it).
  await client.query(`with e as (insert into booking_events (agent_id, type, booking_id, booking, created_at)
                                 select a.id, 'booking.created', gen_random_uuid(), '{}', $1::timestamptz - interval '1 day'
                                   from agents a, generate_series(1, 3) returning id, agent_id, created_at),
                           d as (insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, delivered_at)
                                 select gen_random_uuid(), w.id, e.id, 'delivered', 1, null, e.created_at, e.created_at
                                   from e join webhooks w on w.agent_id = e.agent_id returning id, created_at)
                      insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms) select id, 1, created_at, 204, 3 from d`, [now]);
  const sized = (await client.query(`select 1 from information_schema.columns where table_name = 'webhook_fanout' and column_name = 'deliveries'`)).rowCount === 1;
  await client.query(sized ? 'insert into webhook_fanout (event_id, deliveries) select id, 10 from booking_events where created_at >= $1' : 'insert into webhook_fanout (event_id) select id from booking_events where created_at >= $1', [now]);
  const fanOutFirst = (await client.query(`select to_regproc('fan_out_webhook_events') is not null as present`)).rows[0].present as boolean;
  if (process.env.MEASURE_SQL) await client.query(process.env.MEASURE_SQL);
  await client.query('vacuum analyze');
  await client.query('checkpoint');
  const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number;

  const later = '2030-01-02T00:00:00Z';
  const lease = '2030-01-03T00:00:00Z';
  if (process.env.MEASURE_STATS) await client.query('create extension if not exists pg_stat_statements; select pg_stat_statements_reset()');
  const cpuBefore = await ticks(pid);
  const [{ lsn: walBefore }] = (await client.query('select pg_current_wal_lsn() as lsn')).rows;
  const started = process.hrtime.bigint();
  let delivered = 0;
  let statements = 0;
  const spent = { claim: 0, record: 0, fanOut: 0 };
  const timed = async <T>(what: keyof typeof spent, run: () => Promise<T>): Promise<T> => {
    const at = process.hrtime.bigint();
    try {
      return await run();
    } finally {
      spent[what] += Number(process.hrtime.bigint() - at) / 1e6;
    }
  };
  for (;;) {
    let claimed = (await timed('claim', () => client.query(`select * from claim_webhook_deliveries($1, $2, $3, null, '{}', '{}', 4)`, [later, lease, PLACES]))).rows;
    statements++;
    if (claimed.length < PLACES && fanOutFirst) {
      const [{ taken }] = (await timed('fanOut', () => client.query(`select fan_out_webhook_events($1, '{}', 256, 64) as taken`, [later]))).rows;
      statements++;
      if (claimed.length === 0 && taken === 0) break;
      if (claimed.length === 0) continue;
    } else if (claimed.length === 0) break;
    const left = new Map<string, number>();
    for (const row of claimed) left.set(row.event_id, (left.get(row.event_id) ?? 0) + 1);
    for (let i = 0; i < claimed.length; i += RECORD_BATCH) {
      const outcomes = claimed.slice(i, i + RECORD_BATCH).map((row) => {
        const remaining = left.get(row.event_id)! - 1;
        left.set(row.event_id, remaining);
        return {
          delivery_id: row.id, webhook_id: row.webhook_id, event_id: String(row.event_id), event_created_at: row.event_created_at,
          attempt: row.attempts + 1, attempted_at: later, status_code: 204, error: null, duration_ms: 3, status: 'delivered',
          next_attempt_at: null, finished_at: later, completes_event: row.queued === true && remaining === 0,
        };
      });
      await timed('record', () => client.query('select from record_webhook_attempts($1::jsonb, 5)', [JSON.stringify(outcomes)]));
      statements++;
    }
    delivered += claimed.length;
    if (process.env.EXPLAIN && delivered >= 2000 && delivered < 2000 + PLACES + 10) {
      client.on('notice', (notice) => console.log(notice.message));
      await client.query(`load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on;
                          set auto_explain.log_analyze = on; set auto_explain.log_level = notice`);
      await client.query(`select * from claim_webhook_deliveries($1, $2, $3, null, '{}', '{}', 4)`, [later, lease, PLACES]).then(async ({ rows }) => {
        const outcomes = rows.slice(0, RECORD_BATCH).map((row) => ({
          delivery_id: row.id, webhook_id: row.webhook_id, event_id: String(row.event_id), event_created_at: row.event_created_at,
          attempt: row.attempts + 1, attempted_at: later, status_code: 204, error: null, duration_ms: 3, status: 'delivered',
          next_attempt_at: null, finished_at: later, completes_event: true,
        }));
        await client.query('select from record_webhook_attempts($1::jsonb, 5)', [JSON.stringify(outcomes)]);
      });
      process.exit(0);
    }
    claimed = [];
  }
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = ((await ticks(pid)) - cpuBefore) * 10;
  const [{ bytes }] = (await client.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as bytes', [walBefore])).rows;
  const [{ left }] = (await client.query(`select (select count(*) from webhook_fanout) + (select count(*) from webhook_deliveries where status = 'pending') as left`)).rows;
  console.log(
    `${fanOutFirst ? 'fan-out, claim, record' : 'claim, record (written at the first outcome)'}: ${delivered} deliveries (${left} left), ` +
      `backend CPU ${(cpuMs / delivered * 1000).toFixed(1)} µs, wall ${(wallMs / delivered * 1000).toFixed(1)} µs, WAL ${(Number(bytes) / delivered).toFixed(0)} B per delivery; ${statements} statements; wall per delivery: ${Object.entries(spent).map(([what, ms]) => `${what} ${(ms / delivered * 1000).toFixed(1)} µs`).join(', ')}`,
  );
  if (process.env.MEASURE_STATS) {
    const { rows } = await client.query(`select calls, round(total_exec_time::numeric, 1) as ms, round(total_plan_time::numeric, 1) as plan_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as q
                                           from pg_stat_statements order by total_exec_time desc limit 15`);
    for (const row of rows) console.log(row.calls, row.ms, row.plan_ms, row.q);
  }
  await client.end();
} finally {
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
