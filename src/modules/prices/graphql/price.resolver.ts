import { Arg, Directive, Field, Float, ID, Int, ObjectType, Query, registerEnumType, Resolver, Root, Subscription } from 'type-graphql';
import type { Clock } from '../../../platform/clock.js';
import { cacheControl, listSize } from '../../../platform/graphql/directives.js';
import { freshnessOf, GPU_SLUGS, PROVIDERS } from '../catalog.js';
import { PRICE_HISTORY_LIMITS, type PriceService, type PriceView, type SnapshotAdded } from '../price.service.js';

export enum PriceKind {
  SPOT = 'spot',
  ON_DEMAND = 'on_demand',
}
registerEnumType(PriceKind, { name: 'PriceKind' });

export enum Freshness {
  FRESH = 'fresh',
  STALE = 'stale',
  EXPIRED = 'expired',
}
registerEnumType(Freshness, { name: 'PriceFreshness', description: 'FRESH under 2 h old, STALE under 12 h, EXPIRED beyond.' });

/** Public data that changes with a snapshot (every 30 minutes, or an admin ingest): shared caches may keep it a minute. */
export const PRICE_CACHE_SECONDS = 60;

@ObjectType('GpuPrice', { description: 'Hourly USD price of one GPU at one provider, with where and when it was seen.' })
@Directive(cacheControl({ maxAge: PRICE_CACHE_SECONDS }))
export class GpuPriceNode {
  @Field({ description: 'Full GPU model name.' })
  gpu!: string;

  @Field()
  slug!: string;

  @Field()
  provider!: string;

  @Field(() => Float, { nullable: true })
  spotPriceUsd!: number | null;

  @Field(() => Float, { nullable: true })
  onDemandPriceUsd!: number | null;

  @Field(() => Float, { nullable: true })
  savingsPct!: number | null;

  @Field({ description: 'When the snapshot holding this row was taken.' })
  lastSeen!: Date;

  @Field({ description: 'reference (bundled), admin (ingest route), or the provider adapter that fetched it.' })
  source!: string;

  @Field(() => Int)
  ageMinutes!: number;

  @Field(() => Freshness)
  freshness!: Freshness;
}

@ObjectType('PriceSnapshot')
export class PriceSnapshotNode {
  @Field(() => ID)
  id!: string;

  @Field()
  takenAt!: Date;

  @Field()
  source!: string;

  @Field(() => Int)
  rowCount!: number;
}

@Resolver()
export class PriceResolver {
  constructor(
    private readonly prices: PriceService,
    private readonly clock: Clock,
  ) {}

  private node(row: PriceView): GpuPriceNode {
    const age = this.clock.now().getTime() - row.lastSeen.getTime();
    return Object.assign(new GpuPriceNode(), row, { ageMinutes: Math.max(0, Math.floor(age / 60_000)), freshness: freshnessOf(age) as Freshness });
  }

  @Directive(listSize({ assumedSize: GPU_SLUGS.length * PROVIDERS.length }))
  @Query(() => [GpuPriceNode], { description: 'Current prices, optionally for one GPU slug and/or provider.' })
  async gpuPrices(
    @Arg('gpu', () => String, { nullable: true }) gpu?: string | null,
    @Arg('provider', () => String, { nullable: true }) provider?: string | null,
  ): Promise<GpuPriceNode[]> {
    const feed = gpu ? await this.prices.forGpu(gpu) : await this.prices.feed();
    return feed.prices.filter((row) => !provider || row.provider === provider).map((row) => this.node(row));
  }

  @Directive(listSize({ assumedSize: PRICE_HISTORY_LIMITS.maxRows }))
  @Query(() => [GpuPriceNode], {
    description:
      "Every snapshot's price of a GPU inside [from, to), oldest first. " +
      `A window holding more than ${PRICE_HISTORY_LIMITS.maxRows} rows is a \`validation\` error naming \`from\`: narrow it or name a provider.`,
  })
  async gpuPriceHistory(
    @Arg('gpu') gpu: string,
    @Arg('provider', () => String, { nullable: true }) provider?: string | null,
    @Arg('from', () => Date, { nullable: true }) from?: Date | null,
    @Arg('to', () => Date, { nullable: true }) to?: Date | null,
  ): Promise<GpuPriceNode[]> {
    return (await this.prices.history(gpu, provider ?? undefined, from ?? undefined, to ?? undefined)).map((row) => this.node(row));
  }

  @Query(() => GpuPriceNode, { nullable: true, description: 'The provider with the lowest current price of this kind.' })
  async cheapestGpu(@Arg('gpu') gpu: string, @Arg('kind', () => PriceKind) kind: PriceKind): Promise<GpuPriceNode | null> {
    const row = await this.prices.cheapest(gpu, kind);
    return row ? this.node(row) : null;
  }

  @Subscription(() => PriceSnapshotNode, {
    description: 'A new price snapshot, added on any process.',
    subscribe: ({ context }) => (context as { prices: { snapshotsAdded(): AsyncGenerator<SnapshotAdded> } }).prices.snapshotsAdded(),
  })
  priceSnapshotAdded(@Root() added: SnapshotAdded): PriceSnapshotNode {
    return Object.assign(new PriceSnapshotNode(), added);
  }
}
