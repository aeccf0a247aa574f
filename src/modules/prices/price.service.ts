import type { Actor } from '../../platform/auth/actor.js';
import { EventEmitter, on } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../platform/clock.js';
import type { Notifications } from '../../platform/db/notifications.js';
import { AppError, type FieldErrors } from '../../platform/errors.js';
import { GPUS, isGpuSlug, isProvider, savingsPct, type GpuSlug, type Provider } from './catalog.js';
import { REFERENCE_SNAPSHOT } from './reference-snapshot.js';
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

export const PRICE_SNAPSHOTS_CHANNEL = 'price_snapshots';

interface FeedRow {
  gpu_slug: GpuSlug;
  provider: Provider;
  spot_price_usd: string | null;
  on_demand_price_usd: string | null;
  taken_at: Date;
  source: string;
}

const price = (value: string | null) => (value === null ? null : Number(value));

function toView(row: FeedRow): PriceView {
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
 * served from memory until any process adds a snapshot (a NOTIFY drops every process's copy).
 */
export class PriceService {
  private feedCache: Promise<PriceFeed> | undefined;
  private readonly added = new EventEmitter();

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    notifications: Notifications,
  ) {
    this.added.setMaxListeners(0);
    notifications.on(PRICE_SNAPSHOTS_CHANNEL, (payload) => {
      this.feedCache = undefined;
      const added = JSON.parse(payload) as Omit<SnapshotAdded, 'takenAt'> & { takenAt: string };
      this.added.emit('snapshot', { ...added, takenAt: new Date(added.takenAt) });
    });
    // A snapshot added while the connection was down was never announced: recompute on next read.
    notifications.onReconnect(() => (this.feedCache = undefined));
  }

  /** A fresh install serves the bundled reference snapshot until newer rows replace its pairs. */
  async ensureReferenceSnapshot(): Promise<void> {
    await this.em.fork().transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(7243002)');
      const [existing] = await tx.execute<{ n: string }[]>('select count(*) as n from price_snapshots');
      if (Number(existing?.n ?? 0) > 0) return;
      await this.insertSnapshot(tx, { takenAt: new Date(REFERENCE_SNAPSHOT.takenAt), source: REFERENCE_SNAPSHOT.source, rows: REFERENCE_SNAPSHOT.rows });
    });
  }

  async feed(): Promise<PriceFeed> {
    this.feedCache ??= this.computeFeed().catch((error: unknown) => {
      this.feedCache = undefined;
      throw error;
    });
    return this.feedCache;
  }

  async forGpu(slug: string): Promise<PriceFeed> {
    if (!isGpuSlug(slug)) throw new AppError('not_found', `no GPU ${echo(slug)}; known: ${Object.keys(GPUS).join(', ')}`);
    const feed = await this.feed();
    return { updatedAt: feed.updatedAt, prices: feed.prices.filter((row) => row.slug === slug) };
  }

  /** Adds a snapshot (some pairs, prices may be null); every process's feed follows at once. */
  /** Snapshots from outside (the admin route) come from the operator only. */
  authorizeIngest(actor: Actor): void {
    if (actor.kind !== 'admin') throw new AppError('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
  }

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
    return this.em.fork().transactional((tx) => this.insertSnapshot(tx, input));
  }

  /**
   * Every snapshot's row for a GPU (optionally one provider) inside [from, to), oldest first; a
   * window holding more than `PRICE_HISTORY_LIMITS.maxRows` rows is refused rather than cut, so an
   * answer is never silently partial.
   */
  async history(slug: string, provider: string | undefined, from: Date | undefined, to: Date | undefined): Promise<PriceView[]> {
    if (!isGpuSlug(slug)) throw new AppError('not_found', `no GPU ${echo(slug)}`);
    if (provider !== undefined && !isProvider(provider)) throw AppError.validation({ provider: 'is not a known provider' });
    const rows = await this.em.execute<FeedRow[]>(
      `select r.gpu_slug, r.provider, r.spot_price_usd, r.on_demand_price_usd, s.taken_at, s.source
         from price_rows r join price_snapshots s on s.id = r.snapshot_id
        where r.gpu_slug = ? and (?::text is null or r.provider = ?::text)
          and (?::timestamptz is null or s.taken_at >= ?::timestamptz) and (?::timestamptz is null or s.taken_at < ?::timestamptz)
        order by s.taken_at, s.id, r.provider
        limit ?`,
      [slug, provider ?? null, provider ?? null, from ?? null, from ?? null, to ?? null, to ?? null, PRICE_HISTORY_LIMITS.maxRows + 1],
    );
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
    const rows = await this.em.fork().execute<FeedRow[]>(
      `select distinct on (r.gpu_slug, r.provider) r.gpu_slug, r.provider, r.spot_price_usd, r.on_demand_price_usd, s.taken_at, s.source
         from price_rows r join price_snapshots s on s.id = r.snapshot_id
        order by r.gpu_slug, r.provider, s.taken_at desc, s.id desc`,
    );
    const [latest] = await this.em.fork().execute<{ taken_at: Date | null }[]>('select max(taken_at) as taken_at from price_snapshots');
    const order = Object.keys(GPUS);
    const prices = rows.map(toView).sort((a, b) => order.indexOf(a.slug) - order.indexOf(b.slug) || a.provider.localeCompare(b.provider));
    return { updatedAt: latest?.taken_at ? new Date(latest.taken_at) : null, prices };
  }

  private async insertSnapshot(tx: EntityManager, input: SnapshotInput): Promise<SnapshotAdded> {
    const takenAt = input.takenAt ?? this.clock.now();
    const [snapshot] = await tx.execute<{ id: string }[]>(
      'insert into price_snapshots (taken_at, source, created_at) values (?, ?, ?) returning id',
      [takenAt, input.source, this.clock.now()],
    );
    const id = String(snapshot!.id);
    await tx.execute(
      `insert into price_rows (snapshot_id, gpu_slug, provider, spot_price_usd, on_demand_price_usd)
       select ?, slug, provider, spot, on_demand from jsonb_to_recordset(?::jsonb) as r(slug text, provider text, spot numeric, on_demand numeric)`,
      [id, JSON.stringify(input.rows.map((row) => ({ slug: row.slug, provider: row.provider, spot: row.spotPriceUsd, on_demand: row.onDemandPriceUsd })))],
    );
    const added: SnapshotAdded = { id, takenAt, source: input.source, rowCount: input.rows.length };
    await tx.execute('select pg_notify(?, ?)', [PRICE_SNAPSHOTS_CHANNEL, JSON.stringify(added)]);
    return added;
  }
}
