import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { constraintErrorOf, registerConstraintErrors, toAppError } from '../../../src/platform/errors.js';
import { DIRECTORY_CONSTRAINTS } from '../../../src/modules/directory/constraint-errors.js';
import { AGENT_CONSTRAINTS } from '../../../src/modules/agents/constraint-errors.js';
import { BOOKING_CONSTRAINTS } from '../../../src/modules/bookings/constraint-errors.js';
import { CALENDAR_FEED_CONSTRAINTS } from '../../../src/modules/calendar-feeds/constraint-errors.js';
import { PROPOSAL_CONSTRAINTS } from '../../../src/modules/proposals/constraint-errors.js';
import { WEBHOOK_CONSTRAINTS } from '../../../src/modules/webhooks/constraint-errors.js';
import { startTestApp, type TestApp } from '../../harness.js';

/** One table per module says what each constraint means; these tests hold it to the real schema. */
describe('constraint → error table', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
  });
  afterAll(async () => t?.close());

  const tables = {
    agents: AGENT_CONSTRAINTS,
    bookings: BOOKING_CONSTRAINTS,
    proposals: PROPOSAL_CONSTRAINTS,
    webhooks: WEBHOOK_CONSTRAINTS,
    'calendar feeds': CALENDAR_FEED_CONSTRAINTS,
    directory: DIRECTORY_CONSTRAINTS,
  };

  it.each(Object.entries(tables))('names only constraints the migrated %s schema has (a table entry with a typo never matches)', async (_module, table) => {
    // A constraint proper, a unique index (PostgreSQL reports its name as the constraint), or a
    // trigger function that raises with `constraint = '<name>'`.
    const rows = await t.query<{ name: string }>(
      `select name from unnest($1::text[]) as name
        where exists (select 1 from pg_constraint where conname = name)
           or exists (select 1 from pg_class where relkind = 'i' and relname = name)
           or exists (select 1 from pg_proc where prosrc like '%constraint = ''' || name || '''%')`,
      [Object.keys(table)],
    );
    expect(rows.map((row) => row.name).sort()).toEqual(Object.keys(table).sort());
  });

  it('maps a registered violation to its code and an unregistered one to conflict', async () => {
    const violation = await t.query(`insert into agents (id, name, metadata, config, token_hash, created_at) values (gen_random_uuid(), 'second root', '{}', '{}', 'x', now())`).then(
      () => undefined,
      (error: unknown) => error,
    );
    // The harness seeded no root yet, so the first insert succeeds; the second is the violation.
    const second = await t.query(`insert into agents (id, name, metadata, config, token_hash, created_at) values (gen_random_uuid(), 'third root', '{}', '{}', 'y', now())`).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(violation).toBeUndefined();
    expect(constraintErrorOf(second)).toMatchObject({ code: 'bootstrap_claimed', status: 409 });
    const unregistered = Object.assign(new Error('duplicate key'), { code: '23505', constraint: 'some_other_key' });
    expect(constraintErrorOf(unregistered)).toBeUndefined();
    expect(toAppError(unregistered)).toMatchObject({ code: 'conflict' });
  });

  it('refuses a constraint registered twice with another meaning, and accepts the same meaning again', () => {
    expect(() => registerConstraintErrors(BOOKING_CONSTRAINTS)).not.toThrow();
    expect(() => registerConstraintErrors({ booking_slots_no_overlap: { code: 'conflict', message: 'something else' } })).toThrow(/already mapped to slot_taken/);
  });
});
