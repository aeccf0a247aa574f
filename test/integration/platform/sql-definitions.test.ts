import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { sqlDefinitions } from '../../../src/modules/index.js';
import { applySqlDefinitions, sqlDefinition } from '../../../src/platform/db/sql-definitions.js';
import { createTestDatabase } from '../../harness.js';

/** The template database is migrated with every definition applied; each test works on a clone of it. */
describe('SQL definitions (one current definition per function, applied after the migrations)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const query = async <Row extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<Row[]> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<Row>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  it('every function and trigger of the schema has exactly one definition in a module, and every definition is in the schema', async () => {
    const functions = await query<{ proname: string }>(
      `select proname from pg_proc p
        where pronamespace = 'public'::regnamespace
          and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
        order by proname`,
    );
    expect(functions.map((row) => row.proname)).toEqual(sqlDefinitions.map((definition) => definition.name).sort());
    const triggers = await query<{ function: string }>(`select distinct tgfoid::regproc::text as function from pg_trigger where not tgisinternal order by 1`);
    const defineTriggers = sqlDefinitions.filter((definition) => /create\s+or\s+replace\s+trigger/i.test(definition.sql)).map((definition) => definition.name);
    expect(triggers.map((row) => row.function)).toEqual(defineTriggers.sort());
  });

  it('applies nothing when nothing changed', async () => {
    expect(await applySqlDefinitions(database.url, sqlDefinitions)).toEqual([]);
  });

  it('applies a definition again when its text changes, and only that one', async () => {
    const [first, ...rest] = sqlDefinitions;
    const changed = sqlDefinition(first!.name, `${first!.sql}\n-- changed`);
    expect(await applySqlDefinitions(database.url, [changed, ...rest])).toEqual([first!.name]);
    expect(await applySqlDefinitions(database.url, sqlDefinitions)).toEqual([first!.name]);
  });

  it('creates again a trigger or function dropped behind its back (a migration that drops with cascade)', async () => {
    const trigger = sqlDefinitions.find((definition) => definition.name === 'webhooks_per_agent_limit')!;
    const fn = sqlDefinitions.find((definition) => definition.name === 'booking_item')!;
    await query('drop trigger webhooks_per_agent_limit on webhooks');
    await query('drop function booking_item(bookings) cascade');
    expect((await applySqlDefinitions(database.url, sqlDefinitions)).sort()).toEqual([fn.name, trigger.name].sort());
    expect(await query(`select 1 from pg_trigger where tgname = 'webhooks_per_agent_limit'`)).toHaveLength(1);
  });

  it('refuses a definition that does not create the function it names, and a name defined twice', async () => {
    expect(() => sqlDefinition('booking_item', 'create or replace function booking_items() returns int language sql as $$ select 1 $$;')).toThrow(/must start with/);
    await expect(applySqlDefinitions(database.url, [sqlDefinitions[0]!, sqlDefinitions[0]!])).rejects.toThrow(/defined twice/);
  });

  it('rolls back every definition of the run when one fails', async () => {
    const [first, second] = sqlDefinitions;
    const broken = sqlDefinition(second!.name, `create or replace function ${second!.name}() returns no_such_type language sql as $$ select 1 $$;`);
    const changedFirst = sqlDefinition(first!.name, `${first!.sql}\n-- changed again`);
    await expect(applySqlDefinitions(database.url, [changedFirst, broken])).rejects.toThrow();
    // The first one's change was rolled back with the failure: the current definitions are what is recorded.
    expect(await applySqlDefinitions(database.url, sqlDefinitions)).toEqual([]);
  });
});
