import { Migration } from '@mikro-orm/migrations';

/**
 * The rate-limit counters (REST budgets, GraphQL cost budgets: rate-limiter-flexible's `rate_limits`)
 * become unlogged. Every GraphQL operation charges its cost there, so each read paid a durable commit:
 * on PostgreSQL with fsync on, a bench S3 GraphQL page spent 90 % of its backend time waiting for WAL
 * (LWLock:WALWrite, IO:WalSync) and ran at 0.13 of the reference's REST page. A counter needs no
 * durability: unlogged rows write no WAL, so their commit does not wait for a flush. They are
 * primary-only (standbys cannot read unlogged tables; budgets are never read there) and empty after a
 * crash of the primary, which gives every caller a fresh minute.
 */
export class Migration20261126210000_rate_limits_unlogged extends Migration {
  override up(): void {
    this.addSql('alter table rate_limits set unlogged;');
  }
}
