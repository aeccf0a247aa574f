import { Migration } from '@mikro-orm/migrations';

/** The health of each GPU price adapter: when it last succeeded, and its last error. */
export class Migration20261121060000_price_sources extends Migration {
  override up(): void {
    this.addSql(`
      create table price_sources (
        provider varchar(16) primary key,
        last_success_at timestamptz null,
        last_error_at timestamptz null,
        last_error text null,
        last_row_count int not null default 0
      );`);
  }
}
