import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../platform/clock.js';
import type { RequestMetrics } from '../../platform/http/request-metrics.js';
import type { PriceRefreshService } from '../prices/index.js';
import type { TokenAnalyticsService } from '../token-analytics/index.js';
import type { PairPriceService } from './pair-prices.service.js';
import type { WebhookHealth } from '../webhooks/index.js';
import type { MailHealth } from '../../platform/mail/mailer.js';
import type { PoolMode } from '../../platform/db/pooling.js';
import type { ReplicaHealth } from '../../platform/db/replicas.js';
import { DATABASE_PROBE, USAGE_COUNTS } from './sql/status.sql.js';

/** How the gateway reaches PostgreSQL, for the report: the pooling mode and the read replicas' health. */
export interface DatabaseTopology {
  readonly poolMode: PoolMode;
  replicas(): readonly ReplicaHealth[];
}

export type ComponentStatus = 'operational' | 'degraded' | 'down';

const SLOW_DATABASE_MS = 250;
/**
 * How long the report waits for a due pair-price refresh. A healthy aggregator answers in well under
 * a second; a silent one (5 s) followed by a silent screener (5 s more) would hold every monitoring
 * probe for 10 s, long past their own timeouts, so past this the report says what it is waiting for.
 */
export const PRICE_REFRESH_WAIT_MS = 1000;
const worst = (statuses: ComponentStatus[]): ComponentStatus =>
  statuses.includes('down') ? 'down' : statuses.includes('degraded') ? 'degraded' : 'operational';
/**
 * What an outside dependency's state does to the whole service. Scheduling, the tool directory and
 * the price feed's stored rows run on the database alone; the aggregator, the screener and the mail
 * server each serve one feature, so without them the service is degraded, never down.
 */
const asExternal = (status: ComponentStatus): ComponentStatus => (status === 'down' ? 'degraded' : status);

/** The seed-002 status report: every figure measured when asked, none constant. */
export class StatusService {
  private readonly startedAt: Date;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly requests: RequestMetrics,
    private readonly pairPrices: PairPriceService,
    private readonly tokens: TokenAnalyticsService,
    private readonly priceSources: PriceRefreshService,
    private readonly mail: { health(): MailHealth },
    private readonly webhooks: { health(): WebhookHealth },
    private readonly version: string,
    private readonly topology: DatabaseTopology,
  ) {
    this.startedAt = clock.now();
  }

  async report() {
    const now = this.clock.now();
    const database = await this.probeDatabase();
    const counts = database.status === 'down' ? undefined : await this.counts().catch(() => undefined);
    const { feed, refreshOutstanding } = await this.pairPrices.currentWithin(PRICE_REFRESH_WAIT_MS);
    const tokenHealth = this.tokens.health();
    const cachedPairs = this.tokens.cachedPairCount();
    const gpuSources = database.status === 'down' ? [] : await this.priceSources.health().catch(() => []);

    const priceFeedStatus: ComponentStatus = worst([
      feed.quotes.length === 0 ? 'down' : feed.missing.length > 0 || feed.quotes.some((quote) => quote.source !== 'aggregator') ? 'degraded' : 'operational',
      refreshOutstanding ? 'degraded' : 'operational',
    ]);
    const priceFeedError = refreshOutstanding
      ? `refreshing for ${refreshOutstanding.forMs} ms, waiting for the ${refreshOutstanding.waitingFor}`
      : feed.aggregatorError
        ? `${feed.aggregatorError.message} (at ${feed.aggregatorError.at.toISOString()})`
        : null;
    const mail = this.mail.health();
    const mailFailedLast = mail.lastError !== null && (mail.lastSentAt === null || mail.lastError.at > mail.lastSentAt);
    const webhooks = this.webhooks.health();
    const webhookFailures = webhooks.attemptsLastFiveMinutes.retrying + webhooks.attemptsLastFiveMinutes.failed;
    const tokenStatus: ComponentStatus = !tokenHealth.lastError ? 'operational' : cachedPairs > 0 ? 'degraded' : 'down';
    const sample = feed.quotes[0];

    return {
      // The core decides: down only when the database is. Every outside source counts as degraded at worst.
      status: worst([database.status, ...([priceFeedStatus, tokenStatus, mailFailedLast ? 'down' : 'operational'] as ComponentStatus[]).map(asExternal)]),
      version: this.version,
      uptime_seconds: Math.floor((now.getTime() - this.startedAt.getTime()) / 1000),
      timestamp: now.toISOString(),
      services: {
        database: {
          status: database.status,
          latency_ms: database.latencyMs,
          // Beyond the seed: how connections are pooled, and each read replica (its name, never its
          // address), outside the overall status: a replica that is left out costs the primary reads, not answers.
          pool_mode: this.topology.poolMode,
          replicas: this.topology.replicas().map((replica) => ({
            name: replica.name,
            status: replica.status,
            lag_ms: replica.lagMs,
            behind_bytes: replica.behindBytes,
            replayed: replica.replayed,
            reason: replica.reason,
          })),
        },
        price_feed: {
          status: priceFeedStatus,
          sources: ['aggregator', 'screener', 'fallback'],
          aggregator_pairs: this.pairPrices.pairs.length,
          aggregator_live: feed.aggregatorLive,
          screener_cached: feed.quotes.filter((quote) => quote.source === 'screener').length,
          sample_price: sample ? `${sample.pair} @ ${sample.price.toFixed(4)}` : 'none available',
          last_updated: (feed.lastUpdated ?? now).toISOString(),
          // Beyond the seed: why the aggregator gave nothing, or what a refresh still waits for.
          last_error: priceFeedError,
          // Beyond the seed: where each pair's price came from this time.
          pairs: feed.quotes.map((quote) => ({ pair: quote.pair, price: quote.price, source: quote.source, observed_at: quote.observedAt.toISOString() })),
        },
        token_analytics: {
          status: tokenStatus,
          provider: tokenHealth.provider,
          api_key_required: false,
          endpoints: ['GET /v1/tokens/:mint/analytics', 'GET /v1/tokens/:mint/safety'],
          mcp_tools: ['get_token_analytics', 'get_token_safety'],
          cache: { pairs: cachedPairs, trending: false },
          note: tokenHealth.lastError ? `last screener error at ${tokenHealth.lastError.at.toISOString()}: ${tokenHealth.lastError.message}` : null,
        },
        // Beyond the seed: the GPU price adapters; a failing one keeps its last good rows in the feed.
        gpu_prices: {
          status: worst(gpuSources.map((source) => (source.status === 'down' ? 'degraded' : source.status))),
          sources: gpuSources.map((source) => ({
            provider: source.provider,
            status: source.status,
            last_success: source.lastSuccessAt?.toISOString() ?? null,
            last_error: source.lastError,
          })),
        },
        // Beyond the seed: sign-in mail, down while the last send failed (the overall status says
        // degraded). The error is nodemailer's code only: its messages name the server's address.
        mail: {
          status: (mailFailedLast ? 'down' : 'operational') satisfies ComponentStatus,
          transport: mail.transport,
          waiting: mail.waiting,
          last_sent: mail.lastSentAt?.toISOString() ?? null,
          last_error: mail.lastError ? { at: mail.lastError.at.toISOString(), code: mail.lastError.code } : null,
        },
        // Beyond the seed, outside the overall status: receivers are the customers' servers, and a
        // customer's outage is not ours. Counts of this process's attempts and a failure kind, never a URL.
        webhooks: {
          status: (webhookFailures > 0 ? 'degraded' : 'operational') satisfies ComponentStatus,
          attempts_last_5min: webhooks.attemptsLastFiveMinutes,
          last_failure: webhooks.lastFailure ? { at: webhooks.lastFailure.at.toISOString(), kind: webhooks.lastFailure.kind } : null,
        },
      },
      metrics: {
        total_agents: counts?.agents ?? 0,
        total_trades: counts?.trades ?? 0,
        supported_pairs: this.pairPrices.pairs.length,
        last_5min: (() => {
          const summary = this.requests.lastFiveMinutes();
          return { total: summary.total, avg_response_ms: summary.avgResponseMs, errors_5xx: summary.errors5xx };
        })(),
      },
    };
  }

  private async probeDatabase(): Promise<{ status: ComponentStatus; latencyMs: number }> {
    const started = performance.now();
    try {
      await this.em.fork().execute(DATABASE_PROBE);
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      return { status: latencyMs > SLOW_DATABASE_MS ? 'degraded' : 'operational', latencyMs };
    } catch {
      return { status: 'down', latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    }
  }

  private async counts(): Promise<{ agents: number; trades: number }> {
    const [row] = await this.em.fork().execute<{ agents: string; trades: string }[]>(USAGE_COUNTS);
    return { agents: Number(row?.agents ?? 0), trades: Number(row?.trades ?? 0) };
  }
}
