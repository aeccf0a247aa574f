import { Migration } from '@mikro-orm/migrations';

/**
 * Slot-transfer proposals, the booking event log (the transactional outbox, whose id is the cursor
 * subscribers resume from) and signed webhooks with their deliveries and attempts.
 * Needs graphile-worker's schema (`graphile_worker.add_job`), installed before our migrations.
 */
export class Migration20261121020000_proposals_events_webhooks extends Migration {
  override up(): void {
    this.addSql(`
      create table proposals (
        id uuid primary key,
        proposer_agent_id uuid not null constraint proposals_proposer_agent_id_foreign references agents (id) on delete cascade,
        target_agent_id uuid not null constraint proposals_target_agent_id_foreign references agents (id) on delete cascade,
        starts_at timestamptz not null,
        ends_at timestamptz not null,
        status varchar(16) not null default 'pending'
          constraint proposals_status_check check (status in ('pending', 'accepted', 'declined', 'withdrawn')),
        booking_id uuid null constraint proposals_booking_id_foreign references bookings (id) on delete set null,
        created_at timestamptz not null,
        decided_at timestamptz null,
        constraint proposals_range_check check (ends_at > starts_at),
        constraint proposals_distinct_agents_check check (proposer_agent_id <> target_agent_id)
      );`);
    this.addSql(`create index proposals_proposer_idx on proposals (proposer_agent_id, created_at);`);
    this.addSql(`create index proposals_target_idx on proposals (target_agent_id, created_at);`);

    this.addSql(`
      create table booking_events (
        id bigserial primary key,
        agent_id uuid not null constraint booking_events_agent_id_foreign references agents (id) on delete cascade,
        type varchar(32) not null
          constraint booking_events_type_check check (type in ('booking.created', 'booking.cancelled', 'booking.transferred', 'booking.reminder')),
        booking_id uuid not null,
        booking jsonb not null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index booking_events_agent_idx on booking_events (agent_id, id);`);

    this.addSql(`
      create table webhooks (
        id uuid primary key,
        agent_id uuid not null constraint webhooks_agent_id_foreign references agents (id) on delete cascade,
        url text not null,
        events text[] not null,
        secret varchar(64) not null,
        consecutive_failures int not null default 0,
        disabled_at timestamptz null,
        disabled_reason text null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index webhooks_agent_idx on webhooks (agent_id);`);

    this.addSql(`
      create table webhook_deliveries (
        id uuid primary key,
        webhook_id uuid not null constraint webhook_deliveries_webhook_id_foreign references webhooks (id) on delete cascade,
        event_id bigint not null constraint webhook_deliveries_event_id_foreign references booking_events (id) on delete cascade,
        status varchar(16) not null
          constraint webhook_deliveries_status_check check (status in ('pending', 'delivered', 'failed')),
        attempts int not null default 0,
        next_attempt_at timestamptz null,
        delivered_at timestamptz null,
        last_error text null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index webhook_deliveries_webhook_idx on webhook_deliveries (webhook_id, created_at);`);

    this.addSql(`
      create table webhook_attempts (
        id bigserial primary key,
        delivery_id uuid not null constraint webhook_attempts_delivery_id_foreign references webhook_deliveries (id) on delete cascade,
        attempt int not null,
        attempted_at timestamptz not null,
        status_code int null,
        error text null,
        duration_ms int not null
      );`);
    this.addSql(`create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, attempt);`);

    // One call writes an event everywhere it must go, inside the caller's transaction: the log
    // (whose id is the subscribers' cursor), a delivery plus a queued job per matching webhook, and a
    // NOTIFY that PostgreSQL sends only on commit, so no listener ever sees an uncommitted event.
    this.addSql(`
      create function record_booking_event(p_agent uuid, p_type text, p_booking jsonb, p_at timestamptz)
      returns bigint language plpgsql as $$
      declare
        v_id bigint;
        v_delivery record;
      begin
        -- Cursors must commit in the order they are handed out, or a reader that has seen 12 could
        -- later miss 11. Taking the next one is serialised until commit.
        perform pg_advisory_xact_lock(7243001);
        insert into booking_events (agent_id, type, booking_id, booking, created_at)
          values (p_agent, p_type, (p_booking->>'id')::uuid, p_booking, p_at)
          returning id into v_id;
        for v_delivery in
          insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, created_at)
          select gen_random_uuid(), w.id, v_id, 'pending', 0, p_at
            from webhooks w
           where w.agent_id = p_agent and w.disabled_at is null and p_type = any (w.events)
          returning id
        loop
          perform graphile_worker.add_job('deliver_webhook', json_build_object('deliveryId', v_delivery.id),
                                          job_key => 'delivery:' || v_delivery.id);
        end loop;
        perform pg_notify('booking_events', json_build_object(
          'cursor', v_id::text, 'agentId', p_agent, 'type', p_type, 'createdAt', p_at, 'booking', p_booking)::text);
        return v_id;
      end
      $$;`);
  }
}
