import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
