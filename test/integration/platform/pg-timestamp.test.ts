import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { isoFromTimestamptz } from '../../../src/platform/db/pg-timestamp.js';
import { createTestDatabase } from '../../harness.js';

/** Reads `timestamptz` as PostgreSQL writes it, the way the shared pool does (MikroORM keeps the text). */
async function textClient(url: string, timeZone: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, types: { getTypeParser: () => (text: string) => text } });
  await client.connect();
  await client.query(`set time zone '${timeZone}'`);
  return client;
}

describe('isoFromTimestamptz', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  // Every fraction length PostgreSQL writes (none, 1–6 digits), both ends of the bookable range, leap day, midnight.
  const INSTANTS = [
    '2026-03-01 10:00:00Z',
    '2026-03-01 10:00:00.5Z',
    '2026-03-01 10:00:00.05Z',
    '2026-03-01 10:00:00.123Z',
    '2026-03-01 10:00:00.1234Z',
    '2026-03-01 10:00:00.12345Z',
    '2026-03-01 10:00:00.999999Z',
    '2000-01-01 00:00:00Z',
    '2199-12-31 23:59:59.999Z',
    '2028-02-29 23:59:59.000001Z',
  ];

  // UTC is the fast path (the text rewritten in place); the others go through a Date.
  it.each(['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Kiritimati'])('writes the same instant as PostgreSQL itself, in a %s session', async (timeZone) => {
    const client = await textClient(database.url, timeZone);
    try {
      const { rows } = await client.query<{ text: string; expected: string }>(
        `select t::text as text, to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as expected
           from unnest($1::timestamptz[]) as t`,
        [INSTANTS],
      );
      expect(rows).toHaveLength(INSTANTS.length);
      for (const { text, expected } of rows) expect({ text, iso: isoFromTimestamptz(text) }).toEqual({ text, iso: expected });
      if (timeZone === 'UTC') expect(rows.every((row) => row.text.endsWith('+00'))).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('formats a Date it is given (a pool without the text override)', () => {
    expect(isoFromTimestamptz(new Date('2026-03-01T10:00:00.120Z'))).toBe('2026-03-01T10:00:00.120Z');
  });
});
