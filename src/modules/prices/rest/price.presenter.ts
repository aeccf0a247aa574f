import { REFRESH_INTERVAL_MINUTES } from '../catalog.js';
import type { PriceFeed, PriceView, SnapshotAdded } from '../price.service.js';

/** Seed 002 Price row. */
export function presentPrice(row: PriceView) {
  return {
    gpu: row.gpu,
    slug: row.slug,
    provider: row.provider,
    spot_price_usd: row.spotPriceUsd,
    on_demand_price_usd: row.onDemandPriceUsd,
    savings_pct: row.savingsPct,
    last_seen: row.lastSeen.toISOString(),
  };
}

/** The feed (`/api/v1/prices`), or one GPU's part of it (`/api/v1/prices/<gpu>`, which adds `gpu` first). */
export function presentFeed(feed: PriceFeed) {
  return { updated_at: feed.updatedAt?.toISOString() ?? null, refresh_interval_minutes: REFRESH_INTERVAL_MINUTES, prices: feed.prices.map(presentPrice) };
}

/** The answer to an admin snapshot. */
export function presentSnapshotAdded(added: SnapshotAdded) {
  return { id: added.id, taken_at: added.takenAt.toISOString(), rows: added.rowCount };
}
