import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * The current definition of one PostgreSQL function, with the trigger that calls it when it is a
 * trigger function. Versioned migrations change tables and data; a function is defined once, in a file
 * of the module that owns it, and re-applied after the migrations whenever its text changes, so that
 * file's history is the function's history (graphile/starter's `current.sql`, Flyway's repeatable
 * migrations).
 *
 * Rules of the home: `create or replace` only (the text runs again on every change); a change of
 * arguments or of the returned type needs the old function dropped by a versioned migration first,
 * which runs before the definitions; deleting a definition leaves the function in place until a
 * migration drops it.
 */
export interface SqlDefinition {
  /** The function's name in `pg_proc` (schema `public`). */
  readonly name: string;
  /** `create or replace function <name>(…)` and, for a trigger function, its `create or replace trigger`. */
  readonly sql: string;
}

/** Declares a definition; its text must create the function it names. */
export function sqlDefinition(name: string, sql: string): SqlDefinition {
  const creates = new RegExp(`create\\s+or\\s+replace\\s+function\\s+(public\\.)?${name}\\s*\\(`, 'i');
  if (!creates.test(sql)) throw new Error(`the definition of ${name} must start with create or replace function ${name}(…)`);
  return { name, sql: sql.trim() };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const definesTrigger = (definition: SqlDefinition) => /create\s+or\s+replace\s+trigger\s/i.test(definition.sql);

/**
 * Applies the definitions whose text changed since they were last applied, and any whose function
 * (or trigger) is missing, in one transaction; answers the names applied. Several processes starting
 * at once apply them once: the first holds a lock the others wait for, then they find nothing to do.
 */
export async function applySqlDefinitions(connectionString: string, definitions: readonly SqlDefinition[]): Promise<string[]> {
  const names = new Set<string>();
  for (const definition of definitions) {
    if (names.has(definition.name)) throw new Error(`${definition.name} is defined twice`);
    names.add(definition.name);
  }
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select pg_advisory_xact_lock(hashtext('sql_definitions'))`);
    await client.query(`create table if not exists sql_definitions (
      name text primary key,
      sha256 text not null,
      applied_at timestamptz not null default now())`);
    // A definition may call a function defined after it in the list; bodies are checked when they run.
    await client.query('set local check_function_bodies = off');
    const applied = new Map((await client.query<{ name: string; sha256: string }>('select name, sha256 from sql_definitions')).rows.map((row) => [row.name, row.sha256]));
    const present = new Set(
      (await client.query<{ proname: string }>(`select proname from pg_proc where pronamespace = 'public'::regnamespace and proname = any($1)`, [[...names]])).rows.map((row) => row.proname),
    );
    const triggered = new Set(
      (await client.query<{ proname: string }>(`select p.proname from pg_trigger t join pg_proc p on p.oid = t.tgfoid where not t.tgisinternal`)).rows.map((row) => row.proname),
    );
    const ran: string[] = [];
    for (const definition of definitions) {
      const hash = sha256(definition.sql);
      const current = applied.get(definition.name) === hash && present.has(definition.name) && (!definesTrigger(definition) || triggered.has(definition.name));
      if (current) continue;
      await client.query(definition.sql);
      await client.query(
        `insert into sql_definitions (name, sha256) values ($1, $2)
         on conflict (name) do update set sha256 = excluded.sha256, applied_at = now()`,
        [definition.name, hash],
      );
      ran.push(definition.name);
    }
    // Forgotten definitions: the function stays until a migration drops it (see above).
    await client.query('delete from sql_definitions where not (name = any($1))', [[...names]]);
    await client.query('commit');
    return ran;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
