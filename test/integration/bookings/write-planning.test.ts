/**
 * A create plans its statements once per connection, not on every call. PostgreSQL plans a PL/pgSQL
 * statement afresh each time while it prices the statement's generic plan above a custom one:
 * booking_purge_expired_holds' delete was planned on every create (0.3 ms of a create's 1.6 ms of database
 * time). pg_stat_statements counts the plans of every nested statement, so this file runs a cluster of
 * its own with it preloaded.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { migrations } from '../../../migrations/index.js';
import { CREATE_BOOKING } from '../../../src/modules/bookings/sql/booking.sql.js';
import { entities, sqlDefinitions } from '../../../src/modules/index.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../../src/platform/db/embedded-postgres.js';
import { createOrm, migrate } from '../../../src/platform/db/orm.js';
import { createLogger } from '../../../src/platform/logger.js';

/** PostgreSQL's plan cache tries five custom plans before it weighs a generic one. */
const FIRST_CALLS = 6;
const CALLS = 20;
const MINUTE = 60_000;
const SEEDED_BOOKINGS = 5_000;

let dataDir: string;
let database: EmbeddedDatabase;
let client: pg.Client;
let agentId: string;
/** An agent that holds nothing: its creates answer the purge from its held slots, none. */
let bareAgentId: string;
let created = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'write-planning-'));
  const logger = createLogger('warn');
  database = await startEmbeddedPostgres({ dataDir, logger, statementStats: true, ephemeral: true });
  const orm = await createOrm({ clientUrl: database.url, entities, migrations, logger });
  await migrate(orm, database.url, sqlDefinitions);
  await orm.close();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query('create extension if not exists pg_stat_statements');
  await admin.query('alter system set pg_stat_statements.track_planning = on');
  await admin.query('select pg_reload_conf()');
  agentId = randomUUID();
  await admin.query(`insert into agents (id, name, metadata, config, token_hash, parent_id, created_at) values ($1, 'planner', '{}', '{}', $2, null, now())`, [
    agentId,
    randomUUID(),
  ]);
  // Calendars as the bench seeds them, analysed: the plan cache's choice rests on the tables' statistics.
  await admin.query(
    `with b as (insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
       select gen_random_uuid(), $1, at, at + interval '30 minutes', 'confirmed', null, '[]', now(), at + interval '30 minutes'
         from (select timestamptz '2030-01-01T00:00:00Z' + i * interval '1 hour' as at from generate_series(0, $2 - 1) i) s
       returning id, agent_id, starts_at, ends_at)
     insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
     select id, agent_id, starts_at, ends_at, starts_at, ends_at from b`,
    [agentId, SEEDED_BOOKINGS],
  );
  // A hold on the calendar, far from the creates and not expired: the purge looks for expired ones on every create.
  const holdId = randomUUID();
  await admin.query(`insert into holds (id, holder_agent_id, agent_ids, starts_at, ends_at, expires_at, created_at)
                     values ($1, $2, array[$2::uuid], '2040-01-01T10:00:00Z', '2040-01-01T11:00:00Z', '2100-01-01T00:00:00Z', now())`, [holdId, agentId]);
  await admin.query(
    `with b as (insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until, hold_id)
                values (gen_random_uuid(), $1, '2040-01-01T10:00:00Z', '2040-01-01T11:00:00Z', 'held', null, '[]', now(), '2040-01-01T11:00:00Z', $2)
                returning id, agent_id, starts_at, ends_at, hold_id)
     insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until, hold_id)
     select id, agent_id, starts_at, ends_at, starts_at, ends_at, hold_id from b`,
    [agentId, holdId],
  );
  bareAgentId = randomUUID();
  await admin.query(`insert into agents (id, name, metadata, config, token_hash, parent_id, created_at) values ($1, 'bare', '{}', '{}', $2, $3, now())`, [
    bareAgentId,
    randomUUID(),
    agentId,
  ]);
  await admin.query('analyze');
  await admin.end();
  // A session that starts after the reload sees track_planning on (the postmaster passes the reload on asynchronously).
  for (;;) {
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    if ((await client.query<{ on: string }>("select current_setting('pg_stat_statements.track_planning') as on")).rows[0]!.on === 'on') break;
    await client.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}, 120_000);

afterAll(async () => {
  await client?.end();
  await database?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** One POST /api/bookings as BookingService.create sends it: a fresh one-minute slot, no idempotency key. */
async function createBooking(agent = agentId): Promise<void> {
  const startsAt = new Date(Date.UTC(2031, 0, 1) + created++ * MINUTE);
  const endsAt = new Date(startsAt.getTime() + MINUTE);
  const now = new Date();
  const slots = JSON.stringify([{ starts_at: startsAt.toISOString(), ends_at: endsAt.toISOString() }]);
  const { rows } = await client.query<{ outcome: { booking?: unknown } }>({
    name: CREATE_BOOKING.name,
    text: CREATE_BOOKING.text,
    values: [agent, startsAt, endsAt, null, slots, 1_000_000, null, null, new Date(now.getTime() - 24 * 60 * MINUTE), now],
  });
  expect(rows[0]!.outcome.booking).toBeDefined();
}

it(`plans none of a create's statements again after a connection's first ${FIRST_CALLS} creates`, async () => {
  for (let i = 0; i < FIRST_CALLS; i++) await createBooking();
  await client.query('select pg_stat_statements_reset()');
  for (let i = 0; i < CALLS; i++) await createBooking();

  const { rows } = await client.query<{ query: string; calls: string; plans: string }>(
    `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls, plans from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database()) and calls >= $1`,
    [CALLS],
  );
  // The purge ran on every create (a statement this test would otherwise pass without).
  expect(rows.filter((row) => row.query.startsWith('delete from bookings b where b.id in') && Number(row.calls) === CALLS)).toHaveLength(1);
  expect(rows.filter((row) => Number(row.plans) > 0).map((row) => ({ query: row.query.slice(0, 120), plans: Number(row.plans) }))).toEqual([]);
}, 60_000);

/** pg_stat_statements' rows of this database, their text on one line. */
async function statementStats(): Promise<{ query: string; calls: number }[]> {
  const { rows } = await client.query<{ query: string; calls: string }>(
    `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`,
  );
  return rows.map((row) => ({ query: row.query, calls: Number(row.calls) }));
}

it('answers the purge of an agent that holds nothing from its held slots, none: no probe of its calendar for expired holds', async () => {
  const heldIndexScans = async () => {
    await client.query('select pg_stat_force_next_flush()');
    const { rows } = await client.query<{ n: string }>(`select idx_scan as n from pg_stat_user_indexes where indexrelname = 'booking_slots_held_idx'`);
    return Number(rows[0]!.n);
  };
  for (let i = 0; i < FIRST_CALLS; i++) await createBooking(bareAgentId);
  await client.query('select pg_stat_statements_reset()');
  const scansBefore = await heldIndexScans();
  for (let i = 0; i < CALLS; i++) await createBooking(bareAgentId);
  // Through the index of held slots (a few entries), not the agent's whole calendar.
  expect((await heldIndexScans()) - scansBefore).toBe(CALLS);
  const rows = await statementStats();
  expect(rows.filter((row) => /from booking_slots s where s\.agent_id = p_agent and s\.hold_id is not null/.test(row.query)).map((row) => row.calls)).toEqual([CALLS]);
  expect(rows.filter((row) => row.query.startsWith('delete from bookings b where b.id in'))).toEqual([]);
}, 60_000);
