import { Migration } from '@mikro-orm/migrations';

/**
 * Read-your-writes across processes (platform/db/read-your-writes.ts): the WAL position after each
 * credential's last write, so that any process sends that credential's reads to a replica only once
 * the replica has replayed it. Unlogged: written on every write request, it must cost no WAL and no
 * flush of its own; it is primary-only state (standbys cannot read unlogged tables) and empty after a
 * crash of the primary, when a client's own token (X-Consistency-Token) still holds. Rows are
 * pruned once every serving replica must have passed them.
 */
export class Migration20261126030000_consistency_tokens extends Migration {
  override up(): void {
    this.addSql(`create unlogged table consistency_tokens (
      credential_hash text primary key,
      position pg_lsn not null,
      written_at timestamptz not null default now()
    );`);
    this.addSql('create index consistency_tokens_written_at on consistency_tokens (written_at);');
  }
}
