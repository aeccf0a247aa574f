import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000_agents extends Migration {
  override up(): void {
    this.addSql(`
      create table agents (
        id uuid primary key,
        name varchar(120) not null constraint agents_name_check check (char_length((name)::text) >= 1),
        metadata jsonb not null,
        config jsonb not null,
        token_hash varchar(64) not null constraint agents_token_hash_key unique,
        idempotency_key varchar(255) null constraint agents_idempotency_key_key unique,
        parent_id uuid null constraint agents_parent_id_foreign references agents (id) on delete restrict,
        created_at timestamptz not null
      );`);
    this.addSql(`create index agents_parent_id_idx on agents (parent_id);`);
    // The bootstrap agent is the only one without a parent. A unique index over a constant, limited
    // to parentless rows, lets PostgreSQL admit exactly one of any number of simultaneous bootstraps.
    this.addSql(`create unique index agents_single_root on agents ((parent_id is null)) where parent_id is null;`);
  }
}
