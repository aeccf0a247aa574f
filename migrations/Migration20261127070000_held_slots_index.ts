import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 26, S1: every writer purges the expired holds its slots overlap before it inserts
 * (booking_purge_expired_holds). It looked for them with a GiST probe of the agent's slots and a read of its
 * buffers on every create, though most agents hold nothing: 0.155 ms of create_booking's 0.96 ms of database
 * time in bench S1 (`BENCH_SQL_STATS=1`). The held slots of an agent, in an index of their own (only held
 * slots are in it), answer first whether there is anything to purge.
 */
export class Migration20261127070000_held_slots_index extends Migration {
  override up(): void {
    this.addSql('create index booking_slots_held_idx on booking_slots (agent_id) where hold_id is not null;');
  }

  override down(): void {
    this.addSql('drop index booking_slots_held_idx;');
  }
}
