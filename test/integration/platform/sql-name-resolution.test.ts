import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from '../../harness.js';
import { collectNamedStatements, type FoundStatement } from '../../support/named-statements.js';
import { findShadowedNames, loadSqlParser, plpgsqlStatements } from '../../support/sql-name-shadowing.js';

interface DatabaseFunction {
  signature: string;
  language: 'sql' | 'plpgsql';
  /** `pg_get_functiondef`: the current definition, whichever migration last replaced it. */
  definition: string;
  /** The body of a SQL function (empty for a `begin atomic` body, which the definition holds). */
  source: string;
}

/**
 * Issue 24: `booking_events_after` selected `id::text` and ordered `by id`, so the replay came back in
 * text order (10, 11, …, 2, 3). The rule (see test/support/sql-name-shadowing.ts) runs over every
 * statement the code sends by name and every SQL statement inside the functions the migrations
 * define, read from the migrated database.
 */
describe('SQL: no ORDER BY, GROUP BY or DISTINCT ON name resolves to a different output column', () => {
  let statements: FoundStatement[];
  let functions: DatabaseFunction[];
  let drop: () => Promise<void>;

  beforeAll(async () => {
    await loadSqlParser();
    statements = await collectNamedStatements();
    const database = await createTestDatabase();
    drop = database.drop;
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // The project's functions: those in public (graphile-worker keeps its own in its schema), not an extension's.
      ({ rows: functions } = await client.query<DatabaseFunction>(
        `select p.oid::regprocedure::text as signature, l.lanname as language, pg_get_functiondef(p.oid) as definition, p.prosrc as source
           from pg_proc p join pg_language l on l.oid = p.prolang
          where p.pronamespace = 'public'::regnamespace and l.lanname in ('sql', 'plpgsql')
            and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
          order by 1`,
      ));
    } finally {
      await client.end();
    }
  });
  afterAll(() => drop());

  it('finds the statements and functions it checks', () => {
    // Both sets are collected, not listed: these floors only catch a collection that silently finds nothing.
    expect(statements.map((statement) => statement.name)).toEqual(expect.arrayContaining(['booking_events_after', 'availability', 'claim_webhook_deliveries']));
    expect(new Set(statements.map((statement) => statement.name)).size).toBe(statements.length);
    expect(functions.map((fn) => fn.signature)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^record_booking_event\(/), expect.stringMatching(/^claim_webhook_deliveries\(/)]),
    );
  });

  it('holds for every named statement in src/', () => {
    const violations = statements.flatMap((statement) =>
      findShadowedNames(statement.text).map((found) => `${statement.file} ${statement.name}: ${found.clause} ${found.name} → ${found.outputColumn}`),
    );
    expect(violations).toEqual([]);
  });

  it('holds for every SQL statement inside the migrated functions', () => {
    const violations: string[] = [];
    const dynamic: string[] = [];
    for (const fn of functions) {
      let sql: string[];
      if (fn.language === 'plpgsql') {
        const body = plpgsqlStatements(fn.definition);
        if (body.dynamic > 0) dynamic.push(fn.signature);
        sql = body.statements;
      } else {
        sql = [fn.source.trim() ? fn.source : fn.definition];
      }
      for (const text of sql) {
        for (const found of findShadowedNames(text)) violations.push(`${fn.signature}: ${found.clause} ${found.name} → ${found.outputColumn}`);
      }
    }
    expect(violations).toEqual([]);
    // Dynamic SQL (EXECUTE) cannot be read before it runs; a function that needs it needs another check first.
    expect(dynamic).toEqual([]);
  });
});
