import type { Actor } from '../../platform/auth/actor.js';
import { EventEmitter, on } from 'node:events';
import type { Clock } from '../../platform/clock.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Statements } from '../../platform/db/statements.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import { GPUS, isGpuSlug, isProvider, savingsPct, type GpuSlug, type Provider } from './catalog.js';
import { REFERENCE_SNAPSHOT } from './reference-snapshot.js';
import { PRICE_SNAPSHOTS_CHANNEL } from './sql/add-price-snapshot.function.js';
import { ADD_PRICE_SNAPSHOT, PRICE_FEED, PRICE_HISTORY, type PriceRow } from './sql/price.sql.js';
import { echo } from '../../platform/echo.js';

/** One GPU at one provider, from the newest snapshot that holds the pair. */
export interface PriceView {
  gpu: string;
  slug: GpuSlug;
  provider: Provider;
  spotPriceUsd: number | null;
  onDemandPriceUsd: number | null;
  savingsPct: number | null;
  lastSeen: Date;
  /** Where the snapshot came from: `reference`, `admin`, or a provider adapter. */
  source: string;
}

export interface PriceFeed {
  updatedAt: Date | null;
  prices: PriceView[];
}

export interface SnapshotInput {
  takenAt?: Date | undefined;
  source: string;
  rows: readonly { slug: string; provider: string; spotPriceUsd: number | null; onDemandPriceUsd: number | null }[];
}

export interface SnapshotAdded {
  id: string;
  takenAt: Date;
  source: string;
  rowCount: number;
}

export { PRICE_SNAPSHOTS_CHANNEL } from './sql/add-price-snapshot.function.js';

const price = (value: string | null) => (value === null ? null : Number(value));

function toView(row: PriceRow): PriceView {
  const spot = price(row.spot_price_usd);
  const onDemand = price(row.on_demand_price_usd);
  return {
    gpu: GPUS[row.gpu_slug],
    slug: row.gpu_slug,
    provider: row.provider,
    spotPriceUsd: spot,
    onDemandPriceUsd: onDemand,
    savingsPct: savingsPct(spot, onDemand),
    lastSeen: new Date(row.taken_at),
    source: row.source,
  };
}

/**
 * One `gpuPriceHistory` answer. The refresh adds a row per provider every 30 minutes: 5,000 rows
 * are three months of one provider or two weeks of all seven, about 1 MiB of JSON.
 */
export const PRICE_HISTORY_LIMITS = { maxRows: 5_000 } as const;

/**
 * GPU price snapshots and the current feed. The feed is computed from the database once and then
 * served from memory until a snapshot is added. The process that adds one drops its copy after the
 * commit and before it answers, so its next read computes the feed anew (read your writes); every
 * other process drops its copy when the snapshot's NOTIFY reaches it, or when its LISTEN connection
 * is back after a loss (a notification sent meanwhile is gone).
 */
export class PriceService {
  /** The feed being served: a computation started in `generation`. */
  private feedCache: { generation: number; feed: Promise<PriceFeed> } | undefined;
  /**
   * Counts the snapshots this process knows were added. A computation begun before one was added may
   * have read the older rows: it is never kept past that (not even by its failure, which would drop a newer one).
   */
  private generation = 0;
  private readonly added = new EventEmitter();

  constructor(
    private readonly statements: Statements,
    private readonly clock: Clock,
    notifications: Notifications,
  ) {
    this.added.setMaxListeners(0);
    notifications.on(PRICE_SNAPSHOTS_CHANNEL, (payload) => {
      this.dropFeed();
      const added = JSON.parse(payload) as Omit<SnapshotAdded, 'takenAt'> & { takenAt: string };
      this.added.emit('snapshot', { ...added, takenAt: new Date(added.takenAt) });
    });
    // A snapshot added while the connection was down was never announced: recompute on next read.
    notifications.onReconnect(() => this.dropFeed());
  }

  /** A fresh install serves the bundled reference snapshot until newer rows replace its pairs. */
  async ensureReferenceSnapshot(): Promise<void> {
    await this.addSnapshot({ takenAt: new Date(REFERENCE_SNAPSHOT.takenAt), source: REFERENCE_SNAPSHOT.source, rows: REFERENCE_SNAPSHOT.rows }, true);
    this.dropFeed();
  }

  async feed(): Promise<PriceFeed> {
    if (!this.feedCache) {
      const generation = this.generation;
      const feed = this.computeFeed();
      this.feedCache = { generation, feed };
      feed.catch(() => {
        if (this.feedCache?.generation === generation) this.feedCache = undefined;
      });
    }
    return this.feedCache.feed;
  }

  /**
   * Called once a snapshot is committed (never before: a read between the drop and the commit would
   * compute the old feed again and keep it).
   */
  private dropFeed(): void {
    this.generation++;
    this.feedCache = undefined;
  }

  async forGpu(slug: string): Promise<PriceFeed> {
    if (!isGpuSlug(slug)) throw new AppError('not_found', `no GPU ${echo(slug)}; known: ${Object.keys(GPUS).join(', ')}`);
    const feed = await this.feed();
    return { updatedAt: feed.updatedAt, prices: feed.prices.filter((row) => row.slug === slug) };
  }

  /** Snapshots from outside (the admin route) come from the operator only. */
  authorizeIngest(actor: Actor): void {
    if (actor.kind !== 'admin') throw new AppError('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
  }

  /**
   * Adds a snapshot (some pairs, prices may be null). This process serves it from the moment this
   * returns; other processes once its NOTIFY reaches them.
   */
  async ingest(input: SnapshotInput): Promise<SnapshotAdded> {
    const fields: FieldErrors = {};
    if (input.rows.length === 0) fields.rows = 'must hold at least one row';
    input.rows.forEach((row, index) => {
      if (!isGpuSlug(row.slug)) fields[`rows.${index}.slug`] ??= `must be one of ${Object.keys(GPUS).join(', ')}`;
      if (!isProvider(row.provider)) fields[`rows.${index}.provider`] ??= 'must be one of aws, azure, gcp, oci, lambda, runpod, vast';
    });
    const pairs = new Set(input.rows.map((row) => `${row.slug}/${row.provider}`));
    if (pairs.size !== input.rows.length) fields.rows = 'must not hold the same GPU and provider twice';
    if (input.takenAt && Number.isNaN(input.takenAt.getTime())) fields.taken_at = 'must be a valid date-time';
    else if (input.takenAt && input.takenAt.getTime() > this.clock.now().getTime() + 5 * 60_000) fields.taken_at = 'must not be in the future';
    if (Object.keys(fields).length) throw AppError.validation(fields);
    const added = (await this.addSnapshot(input, false))!;
    // Before answering: the caller's next read must show what it wrote, whenever the NOTIFY comes back.
    this.dropFeed();
    return added;
  }

  /**
   * Every snapshot's row for a GPU (optionally one provider) inside [from, to), oldest first; a
   * window holding more than `PRICE_HISTORY_LIMITS.maxRows` rows is refused rather than cut, so an
   * answer is never silently partial.
   */
  async history(slug: string, provider: string | undefined, from: Date | undefined, to: Date | undefined): Promise<PriceView[]> {
    if (!isGpuSlug(slug)) throw new AppError('not_found', `no GPU ${echo(slug)}`);
    if (provider !== undefined && !isProvider(provider)) throw AppError.validation({ provider: 'is not a known provider' });
    const rows = await this.statements.rows(PRICE_HISTORY, [slug, provider ?? null, from ?? null, to ?? null, PRICE_HISTORY_LIMITS.maxRows + 1]);
    if (rows.length > PRICE_HISTORY_LIMITS.maxRows) {
      throw AppError.validation({ from: `the window holds more than ${PRICE_HISTORY_LIMITS.maxRows} rows: narrow [from, to) or name a provider` });
    }
    return rows.map(toView);
  }

  /** The lowest current price of a GPU of one kind, across providers. */
  async cheapest(slug: string, kind: 'spot' | 'on_demand'): Promise<PriceView | null> {
    const { prices } = await this.forGpu(slug);
    const priced = prices.filter((row) => (kind === 'spot' ? row.spotPriceUsd : row.onDemandPriceUsd) !== null);
    priced.sort((a, b) => (kind === 'spot' ? a.spotPriceUsd! - b.spotPriceUsd! : a.onDemandPriceUsd! - b.onDemandPriceUsd!));
    return priced[0] ?? null;
  }

  /** Snapshots as they are added, on any process. */
  async *snapshotsAdded(): AsyncGenerator<SnapshotAdded> {
    for await (const [added] of on(this.added, 'snapshot') as AsyncIterableIterator<[SnapshotAdded]>) yield added;
  }

  private async computeFeed(): Promise<PriceFeed> {
    const rows = await this.statements.rows(PRICE_FEED, []);
    const order = Object.keys(GPUS);
    const prices = rows.map(toView).sort((a, b) => order.indexOf(a.slug) - order.indexOf(b.slug) || a.provider.localeCompare(b.provider));
    return { updatedAt: rows[0] ? new Date(rows[0].updated_at) : null, prices };
  }

  /** One call of `add_price_snapshot` (sql/): the snapshot, its rows and their NOTIFY in one transaction. */
  private async addSnapshot(input: SnapshotInput, onlyIfFirst: boolean): Promise<SnapshotAdded | undefined> {
    const rows = JSON.stringify(input.rows.map((row) => ({ slug: row.slug, provider: row.provider, spot: row.spotPriceUsd, on_demand: row.onDemandPriceUsd })));
    const [row] = await this.statements.rows(ADD_PRICE_SNAPSHOT, [input.takenAt ?? this.clock.now(), input.source, this.clock.now(), rows, onlyIfFirst]);
    const added = row?.added;
    return added ? { ...added, takenAt: new Date(added.takenAt) } : undefined;
  }

}
