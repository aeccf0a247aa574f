import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook deliveries are created when the dispatcher is ready to send them, not inside the write.
 *
 * A booking write used to insert one delivery per matching endpoint in its own transaction: with ten
 * endpoints, ten rows, each with two foreign-key checks and three index entries, about as much database
 * work as the rest of the create (`BENCH_SQL_STATS=1`, S5: 2.0 ms of 3.6 ms per `create_booking`),
 * and during a burst tens of thousands of them waited as due rows. Now the write queues its event
 * once (`webhook_fanout`, only when the agent has a matching endpoint), and each process's fan-out
 * loop turns queued events into deliveries in batches while fewer than a few hundred are due, so the
 * dispatcher's claim never waits for it.
 * A burst waits as one row per event; the delivery log shows a delivery from the moment it is
 * created, milliseconds after the commit when the dispatcher is idle.
 *
 * Guarantees kept: an event and its queue row commit together; a pass takes queued events with
 * `skip locked`, deletes them and inserts their deliveries in one statement (no event lost or fanned
 * out twice, any number of processes); an event goes to the endpoints that were registered and not
 * disabled when it happened, as before. `record_booking_event`'s `deliveries` now answers how many of
 * its events wait for the dispatcher (0 or 1): the writers use it only to wake the dispatcher.
 */
export class Migration20261123060000_webhook_fanout extends Migration {
  override up(): void {
    this.addSql(`
      create table webhook_fanout (
        event_id bigint primary key constraint webhook_fanout_event_id_foreign references booking_events (id) on delete cascade
      );`);

    this.addSql(`
      create or replace function record_booking_event(p_agent uuid, p_type text, p_booking jsonb, p_at timestamptz,
                                                      out event_id bigint, out previous_event_id bigint, out deliveries int)
      language plpgsql as $$
      begin
        -- The agent's row lock, held from before the cursor is taken until commit, makes one agent's
        -- cursors commit in order (a no-op when the caller holds it already). Other agents never wait.
        perform 1 from agents where id = p_agent for no key update;
        select max(e.id) into previous_event_id from booking_events e where e.agent_id = p_agent;
        insert into booking_events (agent_id, type, booking_id, booking, created_at)
          values (p_agent, p_type, (p_booking->>'id')::uuid, p_booking, p_at)
          returning id into event_id;
        insert into webhook_fanout (event_id)
        select record_booking_event.event_id
         where exists (select 1 from webhooks w where w.agent_id = p_agent and w.disabled_at is null and p_type = any (w.events));
        get diagnostics deliveries = row_count;
      end
      $$;`);

    // Queued events become deliveries, due at once, while fewer than p_due_below deliveries are due
    // outside the caller's busy endpoints (a hanging endpoint's backlog must not hold up the other
    // agents' events). The endpoints are the ones that existed and were enabled when the event happened
    // (one disabled since gets its delivery, which fails as disabled, as when deliveries were written
    // with the event). Answers how many events it took.
    this.addSql(`
      create function fan_out_webhook_events(p_now timestamptz, p_busy_webhooks uuid[], p_due_below int, p_events int)
      returns int language sql
      set plan_cache_mode = force_custom_plan
      set enable_bitmapscan = off
      as $$
        with due as (
          select count(*) as n
            from (select 1 from webhook_deliveries d
                   where d.status = 'pending' and d.next_attempt_at <= p_now and d.webhook_id <> all (p_busy_webhooks)
                   limit p_due_below) counted
        ), taken as (
          delete from webhook_fanout f
           where (select n from due) < p_due_below
             and f.event_id in (select q.event_id from webhook_fanout q order by q.event_id limit p_events for update skip locked)
          returning f.event_id
        ), created as (
          insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
          select gen_random_uuid(), w.id, e.id, 'pending', 0, e.created_at, e.created_at
            from taken t
            join booking_events e on e.id = t.event_id
            join webhooks w on w.agent_id = e.agent_id and e.type = any (w.events)
           where w.created_at <= e.created_at and (w.disabled_at is null or w.disabled_at > e.created_at)
          returning 1
        )
        -- A data-modifying WITH runs to completion whether or not the answer reads it.
        select count(*)::int from taken;
      $$;`);
  }
}
