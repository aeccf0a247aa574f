import { Migration } from '@mikro-orm/migrations';

/** The last good price of each configured token pair: the pair price feed's fallback source. */
export class Migration20261121050000_pair_prices extends Migration {
  override up(): void {
    this.addSql(`
      create table pair_prices (
        pair varchar(32) primary key,
        price numeric(24, 10) not null,
        source varchar(16) not null,
        observed_at timestamptz not null
      );`);
  }
}
