import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** Prices taken at one moment from one source (reference, admin, or a provider adapter). Kept forever. */
@Entity({ tableName: 'price_snapshots' })
@Index({ name: 'price_snapshots_taken_idx', properties: ['takenAt'] })
export class PriceSnapshot {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  takenAt!: Date;

  @Property({ type: 'string', length: 32 })
  source!: string;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt!: Date;
}

/** One GPU at one provider in a snapshot; either price may be unknown. */
@Entity({ tableName: 'price_rows' })
@Index({ name: 'price_rows_pair_idx', properties: ['gpuSlug', 'provider'] })
@Check({ name: 'price_rows_gpu_check', expression: `"gpu_slug" in ('h100', 'h200', 'a100', 'l40s', 'a10g', 't4', 'rtx-4090', 'v100')` })
@Check({ name: 'price_rows_provider_check', expression: `"provider" in ('aws', 'azure', 'gcp', 'oci', 'lambda', 'runpod', 'vast')` })
@Check({
  name: 'price_rows_prices_check',
  expression: '(COALESCE(spot_price_usd, (0)::numeric) >= (0)::numeric) AND (COALESCE(on_demand_price_usd, (0)::numeric) >= (0)::numeric)',
})
export class PriceRow {
  @ManyToOne(() => PriceSnapshot, { primary: true, deleteRule: 'cascade' })
  snapshot!: PriceSnapshot;

  @PrimaryKey({ type: 'string', length: 16 })
  gpuSlug!: string;

  @PrimaryKey({ type: 'string', length: 16 })
  provider!: string;

  @Property({ type: 'decimal', precision: 12, scale: 4, nullable: true })
  spotPriceUsd: string | null = null;

  @Property({ type: 'decimal', precision: 12, scale: 4, nullable: true })
  onDemandPriceUsd: string | null = null;
}

/** One price adapter's health, as the status report shows it. */
@Entity({ tableName: 'price_sources' })
export class PriceSource {
  @PrimaryKey({ type: 'string', length: 16 })
  provider!: string;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  lastSuccessAt: Date | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  lastErrorAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Property({ type: 'integer', default: 0 })
  lastRowCount = 0;
}
