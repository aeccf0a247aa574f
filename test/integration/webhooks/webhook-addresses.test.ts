import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bootstrapAgent, createAgent, type AgentWithToken } from '../../factories/agents.js';
import { createBooking } from '../../factories/bookings.js';
import { startDnsServer, type TestDnsServer } from '../../factories/dns-server.js';
import { IPV4_OTHER_NON_GLOBAL, IPV4_SPECIAL_PURPOSE, IPV6_OTHER_NON_GLOBAL, IPV6_SPECIAL_PURPOSE, nonGlobalCases, samplesOf } from '../../fixtures/iana-special-purpose.js';
import { bearer, startTestApp, type TestApp } from '../../harness.js';

// Issue 24 item 10: IPv4-compatible IPv6 (`[::127.0.0.1]`) and other special-purpose addresses passed
// the private-address guard. Every block of IANA's special-purpose registries that is not globally
// reachable, three samples each in every spelling, is refused when a webhook is registered and again
// when a delivery is attempted (for rows written before the rule, or a name that resolves elsewhere later).

const REFUSED = /^resolves to a loopback, private, link-local or other non-public address \(/;
const CASES = nonGlobalCases();
const NON_GLOBAL_BLOCKS = [...IPV4_SPECIAL_PURPOSE, ...IPV4_OTHER_NON_GLOBAL, ...IPV6_SPECIAL_PURPOSE, ...IPV6_OTHER_NON_GLOBAL].filter((block) => block.globallyReachable !== true);
/** Every sample of every non-global block behind a name of its own (answered as A or AAAA). */
const NAMES = Object.fromEntries(NON_GLOBAL_BLOCKS.flatMap((block, index) => samplesOf(block.block).map((sample, n) => [`b${index}-${n}.hooks.test`, sample])));
const WEBHOOKS_PER_AGENT = 20;

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += width) results.push(...(await Promise.all(items.slice(start, start + width).map(work))));
  return results;
}

describe('webhook URLs on non-public addresses', () => {
  let dns: TestDnsServer;
  let t: TestApp;
  let root: AgentWithToken;

  beforeAll(async () => {
    dns = await startDnsServer(NAMES);
    t = await startTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE: 'false', DNS_SERVERS: dns.address, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_BASE_MS: '600000' },
    });
    root = await bootstrapAgent(t);
  });
  afterAll(async () => {
    await t.close();
    await dns.close();
  });

  it(`are refused at registration: ${CASES.length} spellings of literal addresses and ${Object.keys(NAMES).length} names, 400 naming url, nothing stored`, async () => {
    const agent = await createAgent(t, root);
    const urls = [...CASES.map((testCase) => `http://${testCase.spelling.host}:8080/hook`), ...Object.keys(NAMES).map((name) => `https://${name}/hook`)];
    const answers = await inBatches(urls, 16, async (url) => {
      const response = await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url } });
      return { url, status: response.statusCode, field: Object.keys(response.json().errors ?? {}), refused: REFUSED.test(response.json().errors?.url ?? '') };
    });
    expect(answers.filter((answer) => answer.status !== 400 || answer.field.join() !== 'url' || !answer.refused)).toEqual([]);
    expect(await t.query('select url from webhooks')).toEqual([]);

    // A public address is registered (registration connects to nothing).
    expect((await t.rest({ method: 'POST', url: '/api/webhooks', headers: bearer(agent.token), payload: { url: 'http://93.184.216.34/hook' } })).statusCode).toBe(201);
  });

  it('are refused at delivery, before any connection: every canonical host and every name, written before the rule', async () => {
    // The URL parser folds the spellings into canonical hosts; these are what stored rows hold.
    const urls = [
      ...new Set(CASES.map((testCase) => new URL(`http://${testCase.spelling.host}:8080/hook`).toString())),
      ...Object.keys(NAMES).map((name) => `https://${name}/hook`),
    ];
    const agents: AgentWithToken[] = [];
    for (let start = 0; start < urls.length; start += WEBHOOKS_PER_AGENT) {
      const agent = await createAgent(t, root);
      agents.push(agent);
      const chunk = urls.slice(start, start + WEBHOOKS_PER_AGENT);
      await t.query(
        `insert into webhooks (id, agent_id, url, events, secret, created_at)
         select gen_random_uuid(), $1, url, array['booking.created'], $3, now() from unnest($2::text[]) as url`,
        [agent.id, chunk, `whsec_${randomBytes(32).toString('base64')}`],
      );
    }
    for (const [index, agent] of agents.entries()) {
      const start = new Date(Date.UTC(2033, 0, 1, 9) + index * 3_600_000);
      await createBooking(t, agent, start.toISOString(), new Date(start.getTime() + 1_800_000).toISOString());
    }

    const deadline = Date.now() + 60_000;
    let attempts: { url: string; error: string | null; status_code: number | null }[] = [];
    while (Date.now() < deadline) {
      attempts = await t.query(
        `select w.url, a.error, a.status_code from webhook_attempts a
           join webhook_deliveries d on d.id = a.delivery_id join webhooks w on w.id = d.webhook_id
          where a.attempt = 1`,
      );
      if (attempts.length >= urls.length) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(attempts.map((attempt) => attempt.url).sort()).toEqual([...urls].sort());
    const notRefused = attempts.filter((attempt) => attempt.status_code !== null || !/^refused: the URL resolves to a loopback, private, link-local or other non-public address \(/.test(attempt.error ?? ''));
    expect(notRefused).toEqual([]);
  }, 120_000);
});
