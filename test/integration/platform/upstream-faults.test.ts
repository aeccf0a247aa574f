import { randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { RunpodAdapter } from '../../../src/modules/prices/adapters/runpod.adapter.js';
import { VastAdapter } from '../../../src/modules/prices/adapters/vast.adapter.js';
import { TOKEN_PAIRS } from '../../../src/modules/status/pair-prices.service.js';
import type { Clock } from '../../../src/platform/clock.js';
import { bootstrapAgent, type AgentWithToken } from '../../factories/agents.js';
import { startFakeHermes } from '../../factories/fake-hermes.js';
import { MINT, pair, startFakeScreener } from '../../factories/fake-screener.js';
import { startFaultyUpstream, type FaultyUpstream, type UpstreamMode } from '../../factories/faulty-upstream.js';
import { startPriceSources } from '../../factories/price-sources.js';
import { startSmtpServer } from '../../factories/smtp.js';
import { startWebhookReceiver } from '../../factories/webhook-receiver.js';
import { startTestApp, type TestApp } from '../../harness.js';

// Issue 11: webhook receiver, SMTP server, screener, aggregator and GPU price sources down, silent or
// answering garbage, all at once, while clients keep using the paths that need them: those paths give
// their documented answer within their time box, unrelated routes keep their latency, and the status
// report names every failure.

const SCREENER_TIMEOUT_MS = 5000;
const WEBHOOK_TIMEOUT_MS = 2000;
/** GPU adapters give up after 20 s (`price-refresh.service.ts`); the silent phase waits that long. */
const GPU_ADAPTER_TIMEOUT_MS = 20_000;
const SAMPLES_PER_ROUTE = 40;
const LATENCY_ROUNDS = 3;
/** A status report is a monitoring probe's target: answered within a probe's usual timeout. */
const STATUS_REPORT_BOUND_MS = 2000;

type Fault = Exclude<UpstreamMode, 'healthy' | 'babble'>;

/** Business time that moves with the wall clock, and can be pushed past the 30 s pair-price refresh. */
class MovableClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** A mint nobody asked about yet, so the answer cannot come from a cache. */
const freshMint = () => Array.from({ length: 44 }, () => BASE58[randomInt(BASE58.length)]).join('');
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** The members of the status report this test reads. */
interface StatusReport {
  status: string;
  services: {
    price_feed: { status: string; last_error: string | null };
    token_analytics: { status: string; note: string | null };
    gpu_prices: { status: string; sources: { last_error: string | null }[] };
    mail: { status: string; transport: string; last_sent: string | null; last_error: { at: string; code: string } | null };
    webhooks: { status: string; attempts_last_5min: { delivered: number }; last_failure: { at: string; kind: string } | null };
  };
}

interface Timed {
  status: number;
  body: string;
  ms: number;
}

describe('external services down, silent or answering garbage', () => {
  let t: TestApp;
  let base: string;
  let agent: AgentWithToken;
  const clock = new MovableClock();
  const upstreams: Record<'screener' | 'aggregator' | 'smtp' | 'webhook' | 'gpu', FaultyUpstream> = {} as never;
  const closers: (() => Promise<void>)[] = [];
  let addressSequence = 0;

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Timed> => {
    const started = performance.now();
    const response = await request(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: text, ms: performance.now() - started };
  };
  const status = async (): Promise<StatusReport> => JSON.parse((await call('GET', '/api/status')).body);
  const auth = () => ({ authorization: `Bearer ${agent.token}` });

  /** The routes that touch no external service; their medians are compared across phases. */
  const unrelatedRoutes: Record<string, () => Promise<Timed>> = {
    'GET /api/bookings': () => call('GET', '/api/bookings?limit=20', undefined, auth()),
    'GET /api/tools': () => call('GET', '/api/tools?limit=20'),
    'GraphQL bookings': () =>
      call('POST', '/graphql', { query: '{ bookings(first: 20) { edges { node { id startsAt status } } } }' }, auth()),
  };

  async function measureUnrelated(): Promise<Record<string, number>> {
    const medians: Record<string, number> = {};
    for (const [name, send] of Object.entries(unrelatedRoutes)) {
      const samples: number[] = [];
      for (let n = 0; n < SAMPLES_PER_ROUTE; n++) {
        const answer = await send();
        expect(answer.status).toBe(200);
        samples.push(answer.ms);
      }
      medians[name] = median(samples);
    }
    return medians;
  }

  /**
   * Clients on the paths that need an upstream, concurrently until stopped: token reads of fresh
   * mints (four at a time: a silent screener holds each for 5 s), sign-ins (mail), bookings of the
   * agent with a webhook, and the status report (aggregator, screener).
   */
  function startUpstreamTraffic() {
    const seen = { tokens: [] as Timed[], signIns: [] as Timed[], bookings: [] as Timed[], reports: [] as Timed[] };
    const pending: Promise<void>[] = [];
    // Open loop: each stream starts a request every `everyMs` whether or not the last one has been
    // answered. A closed loop would offer more load when failures are fast (a refused screener answers
    // in 1 ms) and less when they are slow, and the latency comparison would measure that instead.
    const every = (everyMs: number, send: () => Promise<Timed>, into: Timed[]) =>
      setInterval(() => pending.push(send().then((answer) => void into.push(answer))), everyMs);
    const timers = [
      every(50, () => call('GET', `/v1/tokens/${freshMint()}/analytics`), seen.tokens),
      every(200, () => {
        const n = ++addressSequence;
        // Each sign-in from its own address and to its own mailbox: the sign-in limits are 10 a minute.
        return call('POST', '/api/auth/magic-link', { email: `fault-${n}@example.com` }, { 'x-forwarded-for': `10.77.${(n >> 8) & 255}.${n & 255}` });
      }, seen.signIns),
      every(200, () => {
        const start = new Date(Date.UTC(2031, 0, 1) + ++addressSequence * 3_600_000);
        return call('POST', '/api/bookings', { agentId: agent.id, startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 1_800_000).toISOString() }, auth());
      }, seen.bookings),
      every(500, () => call('GET', '/api/status'), seen.reports),
    ];
    return {
      /** What has been answered so far. */
      seen,
      async stop() {
        for (const timer of timers) clearInterval(timer);
        await Promise.all(pending);
        return seen;
      },
    };
  }

  async function setAll(fault: UpstreamMode): Promise<void> {
    await Promise.all([
      upstreams.screener.setMode(fault),
      upstreams.aggregator.setMode(fault),
      upstreams.smtp.setMode(fault),
      // A 200 with any body is a delivered webhook (Standard Webhooks reads only the status), so the
      // receiver's garbage is bytes that are not HTTP.
      upstreams.webhook.setMode(fault === 'garbage' ? 'babble' : fault),
      upstreams.gpu.setMode(fault),
    ]);
  }

  async function waitForReport(accept: (report: StatusReport) => boolean, timeoutMs: number): Promise<StatusReport> {
    const deadline = Date.now() + timeoutMs;
    let report = await status();
    while (!accept(report)) {
      if (Date.now() > deadline) throw new Error(`the status report did not show it within ${timeoutMs} ms:\n${JSON.stringify(report, null, 2)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      report = await status();
    }
    return report;
  }

  const refreshGpuPrices = () => t.query(`select graphile_worker.add_job('refresh_gpu_prices')`);

  beforeAll(async () => {
    const screener = await startFakeScreener({ [MINT]: [pair()] });
    const prices = Object.fromEntries(TOKEN_PAIRS.map((tokenPair, index) => [tokenPair.pythId, 100 + index]));
    // Published "now" in business time, so the aggregator's prices count as live after clock pushes.
    const hermes = await startFakeHermes(prices, () => Math.floor(clock.now().getTime() / 1000));
    const smtp = await startSmtpServer();
    const receiver = await startWebhookReceiver();
    const gpuSources = await startPriceSources();
    closers.push(screener.close, hermes.close, smtp.close, receiver.close, gpuSources.close);
    upstreams.screener = await startFaultyUpstream({ protocol: 'http', healthyUrl: screener.url });
    upstreams.aggregator = await startFaultyUpstream({ protocol: 'http', healthyUrl: hermes.url });
    upstreams.smtp = await startFaultyUpstream({ protocol: 'smtp', healthyUrl: smtp.url });
    upstreams.webhook = await startFaultyUpstream({ protocol: 'http', healthyUrl: receiver.url });
    upstreams.gpu = await startFaultyUpstream({ protocol: 'http', healthyUrl: gpuSources.base });
    for (const upstream of Object.values(upstreams)) closers.push(upstream.close);

    t = await startTestApp({
      clock,
      env: {
        SCREENER_URL: upstreams.screener.url,
        AGGREGATOR_URL: upstreams.aggregator.url,
        SMTP_URL: upstreams.smtp.url,
        PRICE_PROVIDERS: 'runpod,vast',
        WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
        WEBHOOK_RETRY_BASE_MS: '1000',
        TRUST_PROXY: 'loopback',
      },
      priceAdapters: [new RunpodAdapter(upstreams.gpu.url), new VastAdapter(upstreams.gpu.url)],
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    agent = await bootstrapAgent(t);
    for (let hour = 0; hour < 20; hour++) {
      const start = new Date(Date.UTC(2030, 0, 1, hour));
      await call('POST', '/api/bookings', { agentId: agent.id, startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 1_800_000).toISOString() }, auth());
    }
    // The receiver's path is kept: the faulty front forwards it in the healthy mode.
    const registered = await call('POST', '/api/webhooks', { url: `${upstreams.webhook.url}/hooks` }, auth());
    expect(registered.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    for (const close of closers.reverse()) await close();
  });

  it('with every service healthy: the report is operational', async () => {
    await refreshGpuPrices();
    const traffic = startUpstreamTraffic();
    for (const send of Object.values(unrelatedRoutes)) for (let n = 0; n < 20; n++) await send(); // warm-up
    // The warm-up alone can end before the first sign-in and booking are sent (60 fast requests take
    // less than their 200 ms period): then no mail and no webhook was ever due, and the report below
    // waited 15 s for them in vain. The traffic runs until each stream has been answered.
    const started = Date.now();
    while (traffic.seen.signIns.length === 0 || traffic.seen.bookings.length === 0) {
      if (Date.now() - started > 10_000) throw new Error('no sign-in or booking was answered within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seen = await traffic.stop();
    expect(seen.tokens.every((answer) => answer.status === 404)).toBe(true);
    expect(seen.signIns.map((answer) => answer.status)).toEqual(seen.signIns.map(() => 200));
    expect(seen.bookings.map((answer) => answer.status)).toEqual(seen.bookings.map(() => 201));

    clock.advance(31_000);
    const report = await waitForReport(
      (r) => r.services.mail.last_sent !== null && r.services.webhooks.attempts_last_5min.delivered > 0 && r.services.gpu_prices.sources.length === 2,
      15_000,
    );
    expect(report.status).toBe('operational');
    expect(report.services.price_feed).toMatchObject({ status: 'operational', last_error: null });
    expect(report.services.token_analytics).toMatchObject({ status: 'operational', note: null });
    expect(report.services.mail).toMatchObject({ status: 'operational', transport: 'smtp', last_error: null });
    expect(report.services.webhooks).toMatchObject({ status: 'operational', last_failure: null });
    expect(report.services.gpu_prices.status).toBe('operational');
  }, 60_000);

  const expectations: Record<Fault, { tokenWithinMs: [number, number]; note: RegExp; aggregator: RegExp; mailCode: string; webhookKind: string; gpu: RegExp; showsWithinMs: number }> = {
    down: { tokenWithinMs: [0, 1000], note: /ECONNREFUSED/, aggregator: /aggregator: could not connect .*ECONNREFUSED/, mailCode: 'ESOCKET', webhookKind: 'connection_refused', gpu: /fetch failed|ECONNREFUSED/, showsWithinMs: 15_000 },
    // The screener's 5 s time box is what ends a read: never much sooner (that would mean no wait was
    // needed) and never much later.
    silent: { tokenWithinMs: [SCREENER_TIMEOUT_MS - 100, SCREENER_TIMEOUT_MS + 1500], note: /no answer within 5000 ms/, aggregator: /no answer within 5000 ms|waiting for the aggregator/, mailCode: 'ETIMEDOUT', webhookKind: 'timeout', gpu: /aborted|timeout/i, showsWithinMs: GPU_ADAPTER_TIMEOUT_MS + 10_000 },
    garbage: { tokenWithinMs: [0, 1000], note: /expected shape/, aggregator: /expected shape/, mailCode: 'EPROTOCOL', webhookKind: 'invalid_response', gpu: /JSON|Unexpected token|expected/, showsWithinMs: 15_000 },
  };

  describe.each(['down', 'silent', 'garbage'] as const)('every service %s at once', (fault) => {
    it('fails the paths that need them within their bounds, keeps unrelated latency, and reports each failure', async () => {
      const expected = expectations[fault];

      // Unrelated routes: healthy and failing upstreams in alternating rounds under the same open-loop
      // traffic on the failing paths, so that only the upstreams differ. This machine's two cores are
      // shared (load averages of 6 were seen), and its speed drifts by 2× within a minute: a baseline
      // taken once, earlier, measured the drift. Per round, each route's median of 40 sequential
      // requests; the verdict is the median over rounds of faulty / healthy, ≤ 1.5, or within 5 ms
      // (2 ms against 3 ms is noise; one request waiting on an upstream would add ≥ 1 s).
      const latencyTraffic = startUpstreamTraffic();
      for (const send of Object.values(unrelatedRoutes)) for (let n = 0; n < 10; n++) await send(); // warm-up
      const rounds: { healthy: Record<string, number>; faulty: Record<string, number> }[] = [];
      for (let round = 0; round < LATENCY_ROUNDS; round++) {
        await setAll('healthy');
        const healthyRound = await measureUnrelated();
        await setAll(fault);
        await new Promise((resolve) => setTimeout(resolve, 500)); // let the faults bite: silent sockets pile up, sends fail
        rounds.push({ healthy: healthyRound, faulty: await measureUnrelated() });
      }
      await latencyTraffic.stop();
      const verdicts = Object.keys(unrelatedRoutes).map((route) => {
        const healthyMs = median(rounds.map((r) => r.healthy[route]!));
        const faultyMs = median(rounds.map((r) => r.faulty[route]!));
        const ratio = median(rounds.map((r) => r.faulty[route]! / r.healthy[route]!));
        return { route, healthyMs: Math.round(healthyMs * 10) / 10, faultyMs: Math.round(faultyMs * 10) / 10, ratio: Math.round(ratio * 100) / 100, within: ratio <= 1.5 || faultyMs - healthyMs <= 5 };
      });
      console.log(`unrelated routes, healthy vs every upstream ${fault}: ${JSON.stringify(verdicts)}`);
      expect(verdicts.filter((verdict) => !verdict.within)).toEqual([]);

      // The paths that need an upstream, in a window that is all fault.
      const phaseStarted = clock.now();
      clock.advance(31_000); // the pair prices are due for a refresh
      await refreshGpuPrices();
      const traffic = startUpstreamTraffic();
      await new Promise((resolve) => setTimeout(resolve, fault === 'silent' ? 7000 : 2000));
      const seen = await traffic.stop();
      console.log(
        `${fault}: token reads ${seen.tokens.length} (max ${Math.round(Math.max(...seen.tokens.map((a) => a.ms)))} ms), sign-ins max ${Math.round(Math.max(...seen.signIns.map((a) => a.ms)))} ms, ` +
          `bookings max ${Math.round(Math.max(...seen.bookings.map((a) => a.ms)))} ms, status reports max ${Math.round(Math.max(...seen.reports.map((a) => a.ms)))} ms`,
      );

      // Token reads: 503 upstream_unavailable (nothing cached for a fresh mint) within the time box.
      expect(seen.tokens.length).toBeGreaterThan(0);
      for (const answer of seen.tokens) {
        expect({ status: answer.status, error: JSON.parse(answer.body).error }).toEqual({ status: 503, error: 'upstream_unavailable' });
        expect(answer.ms).toBeGreaterThanOrEqual(expected.tokenWithinMs[0]);
        expect(answer.ms).toBeLessThanOrEqual(expected.tokenWithinMs[1]);
      }
      // Sign-ins are answered before the mail is tried; bookings do not wait for their webhooks.
      for (const answer of seen.signIns) expect({ status: answer.status, fast: answer.ms < 1000 }).toEqual({ status: 200, fast: true });
      for (const answer of seen.bookings) expect({ status: answer.status, fast: answer.ms < 1000 }).toEqual({ status: 201, fast: true });
      // The report waits for a due refresh at most PRICE_REFRESH_WAIT_MS, then says what it waits for;
      // it once waited for the aggregator's 5 s and then the screener's 5 s (10.0 s measured).
      for (const answer of seen.reports) expect({ status: answer.status, fast: answer.ms < STATUS_REPORT_BOUND_MS }).toEqual({ status: 200, fast: true });

      clock.advance(31_000);
      const after = (iso: string | null | undefined) => iso != null && new Date(iso) >= new Date(phaseStarted.getTime() - 1000);
      const report = await waitForReport(
        (r) =>
          expected.aggregator.test(r.services.price_feed.last_error ?? '') &&
          r.services.mail.last_error?.code === expected.mailCode &&
          r.services.webhooks.last_failure?.kind === expected.webhookKind &&
          r.services.gpu_prices.sources.every((source) => expected.gpu.test(source.last_error ?? '')),
        expected.showsWithinMs,
      );
      // Every outside service is failing, but the database is up: degraded, never down.
      expect(report.status).toBe('degraded');
      expect(report.services.price_feed.status).not.toBe('operational');
      expect(report.services.token_analytics.status).toMatch(/^(degraded|down)$/);
      expect(report.services.token_analytics.note).toMatch(expected.note);
      expect(report.services.mail).toMatchObject({ status: 'down', last_error: { code: expected.mailCode } });
      expect(after(report.services.mail.last_error?.at)).toBe(true);
      expect(report.services.webhooks.status).toBe('degraded');
      expect(after(report.services.webhooks.last_failure?.at)).toBe(true);
      expect(report.services.gpu_prices.status).not.toBe('operational');
      console.log(`${fault}: ${JSON.stringify({ price_feed: report.services.price_feed.last_error, token_analytics: report.services.token_analytics.note, mail: report.services.mail.last_error, webhooks: report.services.webhooks.last_failure, gpu_prices: report.services.gpu_prices.sources.map((source) => source.last_error) })}`);
    }, 120_000);
  });

  it('recovers without a restart once the services are back', async () => {
    await setAll('healthy');
    clock.advance(31_000);
    await refreshGpuPrices();
    expect((await call('GET', `/v1/tokens/${MINT}/analytics`)).status).toBe(200);
    expect((await call('POST', '/api/auth/magic-link', { email: 'back@example.com' }, { 'x-forwarded-for': '10.78.0.1' })).status).toBe(200);
    const report = await waitForReport(
      (r) => r.services.mail.status === 'operational' && r.services.gpu_prices.status === 'operational' && r.services.price_feed.status === 'operational',
      20_000,
    );
    expect(report.services.token_analytics).toMatchObject({ status: 'operational', note: null });
    expect(report.services.price_feed.last_error).toBeNull();
  }, 60_000);
});
