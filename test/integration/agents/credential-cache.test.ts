import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { sha256Hex } from '../../../src/platform/auth/credentials.js';
import { AGENT_CREDENTIALS_CHANNEL } from '../../../src/modules/agents/agent.service.js';
import { AGENT_BY_TOKEN_HASH } from '../../../src/modules/agents/sql/agent.sql.js';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

/** The process's credential cache (agents/agent.service.ts): misses at once share one lookup. */
describe('the credential cache', () => {
  let t: TestApp;
  let root: AgentWithToken;

  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    root = await bootstrapAgent(t);
  });
  afterAll(() => t.close());

  const lookups = () => t.sql.statements.filter((sql) => sql === AGENT_BY_TOKEN_HASH.text).length;
  const list = (token: string) => t.rest({ method: 'GET', url: '/api/bookings', headers: bearer(token) });
  const until = async (condition: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('looks a token up once for 50 simultaneous first requests with it, and once for an unknown one', async () => {
    const agent = await createAgent(t, root);
    t.sql.reset();
    const answers = await Promise.all(Array.from({ length: 50 }, () => list(agent.token)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(50).fill(200));
    expect(lookups()).toBe(1);

    t.sql.reset();
    const refused = await Promise.all(Array.from({ length: 20 }, () => list('agt_nobody-has-this-one')));
    expect(refused.map((answer) => answer.statusCode)).toEqual(Array(20).fill(401));
    expect(lookups()).toBe(1);
  });

  it('makes requests that come after a credential change look again rather than join a lookup begun before it', async () => {
    const agent = await createAgent(t, root);
    const locker = new pg.Client({ connectionString: t.databaseUrl });
    await locker.connect();
    const blockedLookups = async () =>
      (
        await t.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query = $1`,
          [AGENT_BY_TOKEN_HASH.text],
        )
      )[0]!.n;
    const requests: ReturnType<typeof list>[] = [];
    try {
      // The lookup stays under way for as long as the agents table is locked.
      await locker.query('begin');
      await locker.query('lock table agents in access exclusive mode');
      t.sql.reset();
      requests.push(list(agent.token));
      await until(async () => (await blockedLookups()) === 1, 'the first lookup');
      requests.push(list(agent.token));
      // What the agents_credential_changed trigger sends when the agent changes.
      await t.query('select pg_notify($1, $2)', [AGENT_CREDENTIALS_CHANNEL, sha256Hex(agent.token)]);
      // Requests after the gateway heard it start a lookup of their own; before, they join the first.
      await until(async () => {
        requests.push(list(agent.token));
        return (await blockedLookups()) === 2;
      }, 'a second lookup');
      await locker.query('commit');
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
    expect((await Promise.all(requests)).every((answer) => answer.statusCode === 200)).toBe(true);
    expect(lookups()).toBe(2);
  });
});
