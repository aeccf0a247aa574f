import { beforeAll, describe, expect, it } from '@jest/globals';
import { findShadowedNames, loadSqlParser, plpgsqlStatements } from '../support/sql-name-shadowing.js';

const names = (sql: string) => findShadowedNames(sql).map((found) => `${found.clause} ${found.name} → ${found.outputColumn}`);

describe('the shadowed-name rule', () => {
  beforeAll(() => loadSqlParser());

  it('flags a cast that keeps the column’s name (the replay bug)', () => {
    expect(names('select id::text, agent_id from booking_events where id > $1 order by id limit $2')).toEqual(['ORDER BY id → id::text']);
  });

  it('flags an alias naming another column or expression, in ORDER BY, GROUP BY and DISTINCT ON', () => {
    expect(names('select e.created_at as id from booking_events e order by id')).toEqual(['ORDER BY id → e.created_at as id']);
    expect(names('select count(*) as agent_id from booking_events group by agent_id')).toEqual(['GROUP BY agent_id → count(*) as agent_id']);
    expect(names('select distinct on (day) date_trunc(\'day\', created_at) as day, id from booking_events order by day, id')).toEqual([
      "ORDER BY day → date_trunc('day', created_at) as day",
      "DISTINCT ON day → date_trunc('day', created_at) as day",
    ]);
    expect(names('select lower(email) as email from users group by rollup (email)')).toEqual(['GROUP BY email → lower(email) as email']);
  });

  it('knows PostgreSQL’s implicit names (FigureColname)', () => {
    expect(names('select max(id) from t group by max')).toEqual(['GROUP BY max → max(id)']);
    expect(names('select coalesce(a, b) from t order by coalesce')).toEqual(['ORDER BY coalesce → coalesce(a, b)']);
    expect(names("select 'x'::text from t order by text")).toEqual(["ORDER BY text → 'x'::text"]);
    expect(names('select (select max(id) from u) from t order by max')).toEqual(['ORDER BY max → (select max(id) from u)']);
    expect(names('select (payload).id::text from t order by id')).toEqual(['ORDER BY id → (payload).id::text']);
  });

  it('looks inside subqueries, CTEs, set operations and INSERT … SELECT', () => {
    expect(names('with x as (select id::text from t order by id) select * from x')).toHaveLength(1);
    expect(names('select * from (select id::text from t order by id limit 5) page')).toHaveLength(1);
    expect(names('select 1 where exists (select id::text from t order by id)')).toHaveLength(1);
    expect(names('insert into u (id) select id::text from t order by id')).toHaveLength(1);
    expect(names('(select id::text from t order by id limit 1) union all (select id::text from u)')).toHaveLength(1);
  });

  it('accepts qualified names, the same plain column, positions, and the ORDER BY of a UNION', () => {
    expect(names('select e.id::text as id from booking_events e order by e.id')).toEqual([]);
    expect(names('select id, e.agent_id, b.starts_at as starts_at from booking_events e join bookings b on true order by id, agent_id, starts_at')).toEqual([]);
    expect(names('select id::text from t order by 1')).toEqual([]);
    expect(names('select id::text as cursor from t order by id')).toEqual([]);
    expect(names('select * from t order by id')).toEqual([]);
    expect(names('select id::text as id from t union select id::text from u order by id')).toEqual([]);
    expect(names('select count(*) over (order by id) as id from t')).toEqual([]);
  });

  it('reads the SQL inside a PL/pgSQL body: statements, expressions and assignments', () => {
    const { statements, dynamic } = plpgsqlStatements(`
      create function f(p_agent uuid) returns text language plpgsql as $$
      declare v text; w text;
      begin
        select id::text into v from booking_events where agent_id = p_agent order by id limit 1;
        if (select count(*) from t group by count) > 0 then return v; end if;
        w := (select x::text from t order by x limit 1);
        for v in select y from t loop null; end loop;
        execute 'select 1';
        return w;
      end $$`);
    expect(statements.flatMap(names)).toEqual([
      'ORDER BY id → id::text',
      'GROUP BY count → count(*)',
      'ORDER BY x → x::text',
    ]);
    expect(dynamic).toBe(1);
  });
});
