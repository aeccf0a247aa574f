import { namedStatement } from '../../../platform/db/statements.js';
import type { GpuSlug, Provider } from '../catalog.js';

/** A price row with the snapshot it comes from. */
export interface PriceRow {
  gpu_slug: GpuSlug;
  provider: Provider;
  spot_price_usd: string | null;
  on_demand_price_usd: string | null;
  taken_at: Date;
  source: string;
}

/**
 * The feed: for every GPU/provider pair ever seen, the row of the newest snapshot that holds it, and
 * the newest snapshot's time, in one statement so both come from the same moment (two could straddle
 * a snapshot).
 */
export const PRICE_FEED = namedStatement<[], PriceRow & { updated_at: Date }>(
  'price_feed',
  `select distinct on (r.gpu_slug, r.provider) r.gpu_slug, r.provider, r.spot_price_usd, r.on_demand_price_usd, s.taken_at, s.source,
          (select max(latest.taken_at) from price_snapshots latest) as updated_at
     from price_rows r join price_snapshots s on s.id = r.snapshot_id
    order by r.gpu_slug, r.provider, s.taken_at desc, s.id desc`,
);

/** Every snapshot's row for a GPU (optionally one provider) inside [from, to), oldest first, at most `limit`. */
export const PRICE_HISTORY = namedStatement<[slug: string, provider: string | null, from: Date | null, to: Date | null, limit: number], PriceRow>(
  'price_history',
  `select r.gpu_slug, r.provider, r.spot_price_usd, r.on_demand_price_usd, s.taken_at, s.source
     from price_rows r join price_snapshots s on s.id = r.snapshot_id
    where r.gpu_slug = $1 and ($2::text is null or r.provider = $2::text)
      and ($3::timestamptz is null or s.taken_at >= $3::timestamptz) and ($4::timestamptz is null or s.taken_at < $4::timestamptz)
    order by s.taken_at, s.id, r.provider
    limit $5`,
);

/** What `add_price_snapshot` answers. */
export interface AddedSnapshotRow {
  added: { id: string; takenAt: string; source: string; rowCount: number } | null;
}

export const ADD_PRICE_SNAPSHOT = namedStatement<[takenAt: Date, source: string, createdAt: Date, rows: string, onlyIfFirst: boolean], AddedSnapshotRow>(
  'add_price_snapshot',
  'select add_price_snapshot($1::timestamptz, $2::text, $3::timestamptz, $4::jsonb, $5::boolean) as added',
);

/** Each source's last success and failure (the status report). */
export const PRICE_SOURCES = namedStatement<
  [],
  { provider: string; last_success_at: Date | string | null; last_error_at: Date | string | null; last_error: string | null }
>('price_sources', 'select provider, last_success_at, last_error_at, last_error from price_sources order by provider');

/** A refresh's outcome for one source: a success keeps its row count, a failure keeps the last success. */
export const RECORD_PRICE_SOURCE = namedStatement<
  [provider: string, lastSuccessAt: Date | null, lastErrorAt: Date | null, error: string | null, rows: number],
  never
>(
  'record_price_source',
  `insert into price_sources (provider, last_success_at, last_error_at, last_error, last_row_count) values ($1, $2, $3, $4, $5)
   on conflict (provider) do update set
     last_success_at = coalesce(excluded.last_success_at, price_sources.last_success_at),
     last_error_at = coalesce(excluded.last_error_at, price_sources.last_error_at),
     last_error = coalesce(excluded.last_error, price_sources.last_error),
     last_row_count = case when excluded.last_success_at is not null then excluded.last_row_count else price_sources.last_row_count end`,
);
