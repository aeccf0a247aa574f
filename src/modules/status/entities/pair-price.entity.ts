import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** The last good price of a token pair (the fallback source of the pair price feed). */
@Entity({ tableName: 'pair_prices' })
export class PairPrice {
  @PrimaryKey({ type: 'string', length: 32 })
  pair!: string;

  @Property({ type: 'decimal', precision: 24, scale: 10 })
  price!: string;

  @Property({ type: 'string', length: 16 })
  source!: string;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  observedAt!: Date;
}
