import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSchema, parse } from 'graphql';
import pg from 'pg';
import { CostBudget, MAX_CALLERS } from '../../../src/platform/graphql/cost-budget.js';
import { HttpFastPath, MAX_ACCEPT_VALUES } from '../../../src/platform/graphql/http-fast-path.js';
import { HeaderMap } from '@apollo/server';
import { createLogger } from '../../../src/platform/logger.js';
import { Metrics } from '../../../src/platform/metrics/metrics.js';
import { createTestDatabase } from '../../harness.js';

/** The bounds of what a process keeps for GraphQL cost and its direct path, just below and just above. */
describe('GraphQL cost and direct-path bounds', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  const decided = async (metrics: Metrics, where: 'process' | 'database') => {
    const text = await metrics.render();
    const series = `gateway_graphql_cost_admissions_total{decided="${where}"}`;
    const line = text.split('\n').find((row) => row.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };

  it('keeps a view of at most its bound of callers: at the bound every caller is decided in the process, one more forgets the oldest', async () => {
    expect(MAX_CALLERS).toBe(100_000);
    const bound = 10;
    const metrics = new Metrics();
    const budget = new CostBudget(pool, 1_000, metrics, createLogger('silent'), bound);
    try {
      const callers = Array.from({ length: bound }, (_, n) => `bounded-caller-${n}`);
      for (const caller of callers) await budget.admit(caller, 1); // each asks PostgreSQL once
      await new Promise((resolve) => setTimeout(resolve, 200)); // the admitted points are written
      // At the bound: everyone is still known.
      const before = await decided(metrics, 'database');
      for (const caller of callers) await budget.admit(caller, 1);
      expect(await decided(metrics, 'database')).toBe(before);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // One more: the oldest are forgotten (down to 90 % of the bound) and ask again; the newest do not.
      await budget.admit('bounded-caller-new', 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const asked = await decided(metrics, 'database');
      await budget.admit(callers.at(-1)!, 1);
      expect(await decided(metrics, 'database')).toBe(asked);
      await budget.admit(callers[0]!, 1);
      expect(await decided(metrics, 'database')).toBe(asked + 1);
    } finally {
      await budget.close();
    }
  });

  it(`learns the media type of at most ${MAX_ACCEPT_VALUES} Accept values; a request with another goes to Apollo`, () => {
    const schema = buildSchema('type Query { hello: String }');
    const fastPath = new HttpFastPath({ schema, plugins: [], costs: {} as never, operations: {} as never, answers: {} as never });
    const query = '{ hello }';
    fastPath.trust(query, parse(query), 'hash');
    const request = (accept: string) => ({ method: 'POST', headers: new HeaderMap([['accept', accept]]), search: '', body: { query } });
    for (let n = 0; n < MAX_ACCEPT_VALUES; n++) fastPath.learnMediaType(`application/json; n=${n}`, 200, 'application/json; charset=utf-8');
    expect(fastPath.plan(request(`application/json; n=${MAX_ACCEPT_VALUES - 1}`))).toBeDefined();
    fastPath.learnMediaType(`application/json; n=${MAX_ACCEPT_VALUES}`, 200, 'application/json; charset=utf-8');
    expect(fastPath.plan(request(`application/json; n=${MAX_ACCEPT_VALUES}`))).toBeUndefined();
  });
});
