import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../../harness.js';

/** The booking aggregate (a booking and its slots) has one writer: these functions, each defined in src/modules/bookings/sql/. */
const WRITERS = [
  'booking_cancel',
  'booking_confirm_held',
  'booking_delete_held',
  'booking_exclude_occurrences',
  'booking_extend_series',
  'booking_insert',
  'booking_mark_reminded',
  'booking_move',
  'booking_purge_expired_holds',
  'booking_transfer',
];
const WRITES_BOOKINGS = /\b(insert\s+into|update|delete\s+from)\s+(bookings|booking_slots)\b/i;
/** The ORM's writes of the same tables, through their entities. */
const ORM_WRITES_BOOKINGS = /\bnative(Insert|Update|Delete)\(\s*Booking(Slot)?\b|\b(create|assign)\(\s*Booking(Slot)?\b|new Booking(Slot)?\(/;

async function sourceFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => join(entry.parentPath, entry.name));
}

describe('one writer for bookings and their slots', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
  });
  afterAll(async () => t?.close());

  it('in the database, only the booking writers write bookings or booking_slots', async () => {
    const rows = await t.query<{ name: string }>(
      `select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public' and p.prosrc ~* $1 order by 1`,
      [WRITES_BOOKINGS.source.replaceAll('\\b', '\\y')],
    );
    expect(rows.map((row) => row.name)).toEqual(WRITERS);
  });

  it('in the source, nothing but the writers\' definitions writes bookings or booking_slots (services call the writers)', async () => {
    const offenders: string[] = [];
    const writerDefinitions = new Set(WRITERS.map((name) => join('src/modules/bookings/sql', `${name.replaceAll('_', '-')}.function.ts`)));
    for (const file of await sourceFiles('src')) {
      if (writerDefinitions.has(file)) continue;
      const text = await readFile(file, 'utf8');
      if (WRITES_BOOKINGS.test(text) || ORM_WRITES_BOOKINGS.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });

  it('keeps idempotency in one home: only idempotency_lookup and idempotency_record read or write idempotency_keys', async () => {
    const rows = await t.query<{ name: string }>(
      `select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public' and p.prosrc ~* '\\yidempotency_keys\\y' order by 1`,
    );
    expect(rows.map((row) => row.name)).toEqual(['idempotency_lookup', 'idempotency_record']);
    const homes = new Set(['src/modules/bookings/sql/idempotency-lookup.function.ts', 'src/modules/bookings/sql/idempotency-record.function.ts']);
    const offenders: string[] = [];
    for (const file of await sourceFiles('src')) {
      // The entity names the table for the ORM's schema; it reads and writes nothing.
      if (homes.has(file) || file.endsWith('idempotency-key.entity.ts')) continue;
      if (/\bidempotency_keys\b|\bIdempotencyKey\b/.test(await readFile(file, 'utf8')) && !file.endsWith('bookings/index.ts')) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
