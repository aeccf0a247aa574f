import { Migration } from '@mikro-orm/migrations';

/** GPU price snapshots (seed 002): every snapshot is kept; the feed shows the newest row per GPU and provider. */
export class Migration20261121040000_prices extends Migration {
  override up(): void {
    this.addSql(`
      create table price_snapshots (
        id bigserial primary key,
        taken_at timestamptz not null,
        source varchar(32) not null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index price_snapshots_taken_idx on price_snapshots (taken_at);`);
    this.addSql(`
      create table price_rows (
        snapshot_id bigint not null constraint price_rows_snapshot_id_foreign references price_snapshots (id) on delete cascade,
        gpu_slug varchar(16) not null,
        provider varchar(16) not null,
        spot_price_usd numeric(12, 4) null,
        on_demand_price_usd numeric(12, 4) null,
        constraint price_rows_pkey primary key (snapshot_id, gpu_slug, provider),
        constraint price_rows_gpu_check check (gpu_slug in ('h100', 'h200', 'a100', 'l40s', 'a10g', 't4', 'rtx-4090', 'v100')),
        constraint price_rows_provider_check check (provider in ('aws', 'azure', 'gcp', 'oci', 'lambda', 'runpod', 'vast')),
        constraint price_rows_prices_check check (coalesce(spot_price_usd, 0) >= 0 and coalesce(on_demand_price_usd, 0) >= 0)
      );`);
    this.addSql(`create index price_rows_pair_idx on price_rows (gpu_slug, provider);`);
  }
}
