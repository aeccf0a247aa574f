import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 26, S5: record_webhook_attempts records a batch's deliveries and attempt rows in one set-based statement
 * instead of calling record_webhook_attempt once per outcome (0.12 ms a call, 30,000 calls in S5's ten seconds);
 * the per-outcome function goes.
 */
export class Migration20261127040000_webhook_attempts_set_based extends Migration {
  override up(): void {
    this.addSql('drop function if exists record_webhook_attempt(uuid, int, timestamptz, int, text, int, text, timestamptz, timestamptz, int);');
  }
}
