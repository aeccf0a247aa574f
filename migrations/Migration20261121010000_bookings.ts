import { Migration } from '@mikro-orm/migrations';

export class Migration20261121010000_bookings extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists btree_gist;`);
    this.addSql(`
      create table bookings (
        id uuid primary key,
        agent_id uuid not null constraint bookings_agent_id_foreign references agents (id) on delete cascade,
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        status varchar(16) not null default 'confirmed' constraint bookings_status_check check (status in ('confirmed', 'cancelled')),
        rrule text null,
        exdates jsonb not null,
        warning_sent_at timestamptz null,
        created_at timestamptz not null,
        cancelled_at timestamptz null,
        constraint bookings_range_check check (ends_at > starts_at)
      );`);
    this.addSql(`create index bookings_agent_starts_idx on bookings (agent_id, starts_at, id);`);
    // The booking cap counts an agent's confirmed bookings that have not ended yet.
    this.addSql(`create index bookings_agent_live_ends_idx on bookings (agent_id, ends_at) where status = 'confirmed';`);

    this.addSql(`
      create table booking_slots (
        booking_id uuid not null constraint booking_slots_booking_id_foreign references bookings (id) on delete cascade,
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        agent_id uuid not null constraint booking_slots_agent_id_foreign references agents (id) on delete cascade,
        constraint booking_slots_pkey primary key (booking_id, starts_at)
      );`);
    // Half-open ranges: [09:00, 10:00) and [10:00, 11:00) do not overlap, so back-to-back is allowed.
    this.addSql(`
      alter table booking_slots add constraint booking_slots_no_overlap
        exclude using gist (agent_id with =, tstzrange(starts_at, ends_at, '[)') with &&);`);

    this.addSql(`
      create table idempotency_keys (
        agent_id uuid not null constraint idempotency_keys_agent_id_foreign references agents (id) on delete cascade,
        operation varchar(32) not null,
        key varchar(255) not null,
        request_hash varchar(64) not null,
        outcome jsonb not null,
        created_at timestamptz not null,
        constraint idempotency_keys_pkey primary key (agent_id, operation, key)
      );`);
  }
}
