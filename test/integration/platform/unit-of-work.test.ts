import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent } from '../../../src/modules/agents/entities/agent.entity.js';
import { inUnitOfWork } from '../../../src/platform/db/unit-of-work.js';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { startTestApp, type TestApp } from '../../harness.js';

/** A unit of work per request, forked only when the ORM is used in it (platform/db/unit-of-work.ts). */
describe('unit of work', () => {
  let t: TestApp;
  let agent: AgentWithToken;
  let forks = 0;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    agent = await bootstrapAgent(t);
    const root = t.orm.em;
    const fork = root.fork.bind(root);
    root.fork = ((...args: Parameters<typeof fork>) => {
      forks++;
      return fork(...args);
    }) as typeof root.fork;
  });
  afterAll(async () => t?.close());

  it('forks once per scope that uses the ORM, and the fork is that scope’s alone', async () => {
    forks = 0;
    const [first, second] = await Promise.all(
      [0, 1].map(() =>
        inUnitOfWork(async () => {
          const em = t.orm.em.getContext();
          const loaded = await em.findOneOrFail(Agent, agent.id);
          // The same fork for the whole scope: one identity map, one entity per row.
          expect(t.orm.em.getContext()).toBe(em);
          expect(await em.findOneOrFail(Agent, agent.id)).toBe(loaded);
          return { em, loaded };
        }),
      ),
    );
    expect(forks).toBe(2);
    expect(first!.em).not.toBe(second!.em);
    expect(first!.loaded).not.toBe(second!.loaded);
  });

  it('does not fork for a request answered without the ORM (the booking list, a named statement)', async () => {
    const headers = { authorization: `Bearer ${agent.token}` };
    forks = 0;
    const created = await t.rest({ method: 'POST', url: '/api/bookings', headers, payload: { agentId: agent.id, startsAt: '2031-02-03T10:00:00Z', endsAt: '2031-02-03T11:00:00Z' } });
    expect(created.statusCode).toBe(201);
    const listed = await t.rest({ method: 'GET', url: '/api/bookings?limit=5', headers });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().items).toHaveLength(1);
    expect(forks).toBe(0);
    // …while a request that uses the ORM gets its fork.
    const occurrences = await t.rest({ method: 'GET', url: `/api/bookings/${created.json().id}/occurrences`, headers });
    expect(occurrences.statusCode).toBe(200);
    expect(forks).toBe(1);
  });

  it('refuses the global entity manager outside any scope', () => {
    expect(() => t.orm.em.getContext()).toThrow(/global/i);
  });
});
