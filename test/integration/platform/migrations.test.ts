import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import { migrations } from '../../../migrations/index.js';
import { entities } from '../../../src/modules/index.js';
import { silentWorkerLogger } from '../../../src/platform/jobs/worker-logger.js';
import { createOrm } from '../../../src/platform/db/orm.js';
import { createLogger } from '../../../src/platform/logger.js';
import { startTestApp, type TestApp } from '../../harness.js';

describe('migrations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('cover every entity: the migrated schema needs no further change', async () => {
    const sql = await t.orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: false });
    expect(sql.trim()).toBe('');
  });

  it('are all recorded as applied', async () => {
    expect(await t.orm.migrator.getPending()).toEqual([]);
  });
});

/**
 * A fresh database migrated up to `before`, filled by `seed` as an installation of that version would be, then
 * migrated the rest of the way; `check` reads the result. The database is dropped afterwards.
 */
async function upgradeFrom(before: string, seed: (db: pg.Client) => Promise<void>, check: (db: pg.Client) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_ADMIN_URL });
  const name = `gateway_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(process.env.TEST_POSTGRES_ADMIN_URL!);
  url.pathname = `/${name}`;
  await admin.connect();
  await admin.query(`create database ${name}`);
  const orm = await createOrm({ clientUrl: url.toString(), entities, migrations, logger: createLogger('silent'), poolMax: 1 });
  const db = new pg.Client({ connectionString: url.toString() });
  try {
    await runWorkerMigrations({ connectionString: url.toString(), logger: silentWorkerLogger });
    await orm.migrator.up({ to: before });
    await db.connect();
    await seed(db);
    await orm.migrator.up();
    await check(db);
  } finally {
    await db.end().catch(() => undefined);
    await orm.close(true);
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

describe('the agent-family migration on an installation that has agents', () => {
  it('gives every agent its root, however deep, and counts each family', async () => {
    await upgradeFrom(
      'Migration20261125000000_booking_writers',
      // A root with two children, a grandchild and a great-grandchild.
      (db) =>
        db.query(`
        insert into agents (id, name, metadata, config, token_hash, parent_id, created_at) values
          ('00000000-0000-4000-8000-000000000001', 'root', '{}', '{}', 'h1', null, now()),
          ('00000000-0000-4000-8000-000000000002', 'a', '{}', '{}', 'h2', '00000000-0000-4000-8000-000000000001', now()),
          ('00000000-0000-4000-8000-000000000003', 'b', '{}', '{}', 'h3', '00000000-0000-4000-8000-000000000001', now()),
          ('00000000-0000-4000-8000-000000000004', 'a.a', '{}', '{}', 'h4', '00000000-0000-4000-8000-000000000002', now()),
          ('00000000-0000-4000-8000-000000000005', 'a.a.a', '{}', '{}', 'h5', '00000000-0000-4000-8000-000000000004', now())`).then(() => undefined),
      async (db) => {
        const roots = await db.query('select name, root_id from agents order by name');
        expect(roots.rows).toEqual(['a', 'a.a', 'a.a.a', 'b', 'root'].map((agent) => ({ name: agent, root_id: '00000000-0000-4000-8000-000000000001' })));
        expect((await db.query('select root_id, members from agent_families')).rows).toEqual([{ root_id: '00000000-0000-4000-8000-000000000001', members: 5 }]);
      },
    );
  });
});

describe('the first-attempt webhook migration on an installation with queued events', () => {
  it('sizes each queued event by the endpoints that take its type, and lets writers of the previous version queue more', async () => {
    await upgradeFrom(
      'Migration20261127050000_common_working_time',
      async (db) => {
        await db.query(`insert into agents (id, name, metadata, config, token_hash, root_id, created_at)
                        values ('00000000-0000-4000-8000-000000000001', 'a', '{}', '{}', 'h1', '00000000-0000-4000-8000-000000000001', now())`);
        // Two endpoints take booking.created, one only booking.cancelled.
        await db.query(`insert into webhooks (id, agent_id, url, events, secret, created_at) values
                          (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'https://a.example/1', '{booking.created,booking.cancelled}', 'whsec_x', now()),
                          (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'https://a.example/2', '{booking.created}', 'whsec_x', now()),
                          (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'https://a.example/3', '{booking.cancelled}', 'whsec_x', now())`);
        await db.query(`with e as (insert into booking_events (agent_id, type, booking_id, booking, created_at)
                                   select '00000000-0000-4000-8000-000000000001', t, gen_random_uuid(), '{}', now()
                                     from unnest('{booking.created,booking.cancelled}'::text[]) t returning id)
                        insert into webhook_fanout (event_id) select id from e`);
      },
      async (db) => {
        const queued = await db.query(`select e.type, f.deliveries, f.leased_until from webhook_fanout f join booking_events e on e.id = f.event_id order by e.type`);
        expect(queued.rows).toEqual([
          { type: 'booking.cancelled', deliveries: 2, leased_until: null },
          { type: 'booking.created', deliveries: 2, leased_until: null },
        ]);
        // A writer of the previous version names no count.
        await db.query(`with e as (insert into booking_events (agent_id, type, booking_id, booking, created_at)
                                   values ('00000000-0000-4000-8000-000000000001', 'booking.created', gen_random_uuid(), '{}', now()) returning id)
                        insert into webhook_fanout (event_id) select id from e`);
        expect((await db.query('select count(*)::int as n from webhook_fanout')).rows[0].n).toBe(3);
      },
    );
  });
});
