import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { PRICE_SOURCES, RECORD_PRICE_SOURCE } from './sql/price.sql.js';
import type { Logger } from '../../platform/logger.js';
import type { PriceAdapter } from './adapters/adapter.js';
import { AwsAdapter } from './adapters/aws.adapter.js';
import { AzureAdapter } from './adapters/azure.adapter.js';
import { RunpodAdapter } from './adapters/runpod.adapter.js';
import { VastAdapter } from './adapters/vast.adapter.js';
import type { Provider } from './catalog.js';
import type { PriceService } from './price.service.js';

export const REFRESH_GPU_PRICES_TASK = 'refresh_gpu_prices';
const ADAPTER_TIMEOUT_MS = 20_000;

/** The providers whose public pricing endpoints need no account. gcp, oci and lambda come from ingest. */
export function defaultAdapters(): PriceAdapter[] {
  return [new AwsAdapter(), new AzureAdapter(), new RunpodAdapter(), new VastAdapter()];
}

export interface SourceHealth {
  provider: string;
  status: 'operational' | 'degraded' | 'down';
  lastSuccessAt: Date | null;
  lastErrorAt: Date | null;
  lastError: string | null;
}

/**
 * Runs the adapters of the enabled providers (the 30-minute job). Each source that answers becomes its
 * own snapshot; a source that fails adds no rows, so the feed keeps its last good ones, and its error
 * is recorded for the status report.
 */
export class PriceRefreshService {
  constructor(
    private readonly statements: Statements,
    private readonly clock: Clock,
    private readonly prices: PriceService,
    private readonly enabled: readonly string[],
    private readonly logger: Logger,
    private readonly adapters: readonly PriceAdapter[] = defaultAdapters(),
  ) {}

  async refresh(): Promise<{ provider: Provider; rows: number; error?: string }[]> {
    const active = this.adapters.filter((adapter) => this.enabled.includes(adapter.provider));
    return Promise.all(
      active.map(async (adapter) => {
        const now = this.clock.now();
        try {
          const rows = await adapter.fetchRows(AbortSignal.timeout(ADAPTER_TIMEOUT_MS));
          if (rows.length === 0) throw new Error('the source listed none of the feed’s GPUs');
          await this.prices.ingest({ source: adapter.provider, takenAt: now, rows: rows.map((row) => ({ ...row, provider: adapter.provider })) });
          await this.record(adapter.provider, { lastSuccessAt: now, rows: rows.length });
          return { provider: adapter.provider, rows: rows.length };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          this.logger.warn({ provider: adapter.provider, err: error }, 'GPU price source failed; keeping its last good rows');
          await this.record(adapter.provider, { lastErrorAt: now, error: message });
          return { provider: adapter.provider, rows: 0, error: message };
        }
      }),
    );
  }

  async health(): Promise<SourceHealth[]> {
    const rows = await this.statements.rows(PRICE_SOURCES, []);
    const date = (value: Date | string | null) => (value === null ? null : new Date(value));
    return rows.map((row) => {
      const lastSuccessAt = date(row.last_success_at);
      const lastErrorAt = date(row.last_error_at);
      const failedLast = lastErrorAt !== null && (lastSuccessAt === null || lastErrorAt > lastSuccessAt);
      return {
        provider: row.provider,
        status: !failedLast ? 'operational' : lastSuccessAt ? 'degraded' : 'down',
        lastSuccessAt,
        lastErrorAt,
        lastError: failedLast ? row.last_error : null,
      };
    });
  }

  private async record(provider: string, outcome: { lastSuccessAt?: Date; rows?: number; lastErrorAt?: Date; error?: string }): Promise<void> {
    await this.statements.rows(RECORD_PRICE_SOURCE, [provider, outcome.lastSuccessAt ?? null, outcome.lastErrorAt ?? null, outcome.error ?? null, outcome.rows ?? 0]);
  }
}
