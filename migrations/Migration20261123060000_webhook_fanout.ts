import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook deliveries are created when the dispatcher is ready to send them, not inside the write.
 *
 * A booking write used to insert one delivery per matching endpoint in its own transaction: with ten
 * endpoints, ten rows, each with two foreign-key checks and three index entries, about as much database
 * work as the rest of the create (`BENCH_SQL_STATS=1`, S5: 2.0 ms of 3.6 ms per `create_booking`),
 * and during a burst tens of thousands of them waited as due rows. Now the write queues its event
 * once (`webhook_fanout`, only when the agent has a matching endpoint), and each dispatcher pass turns
 * a few queued events into deliveries while fewer than a few hundred deliveries are due and claimable.
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

    // Queued events become deliveries, due at once. The endpoints are the ones that existed and were
    // enabled when the event happened (an endpoint disabled since gets its delivery, which fails as
    // disabled, as when deliveries were written with the event).
    this.addSql(`
      create function fan_out_webhook_events(p_events int) returns int language sql as $$
        with taken as (
          delete from webhook_fanout f
           where f.event_id in (select q.event_id from webhook_fanout q order by q.event_id limit p_events for update skip locked)
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
        select count(*)::int from created;
      $$;`);

    // The claim first tops up the due deliveries from the queue (in its own statement, so the claim
    // below sees them), only while fewer than four claims' worth are due and claimable here: deliveries
    // are created about as fast as they are sent, and a slow endpoint's backlog (its places taken) does
    // not stop other agents' events from becoming deliveries.
    this.addSql(`
      create or replace function claim_webhook_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit int, p_only uuid,
                                                          p_in_flight uuid[], p_busy_webhooks uuid[], p_per_webhook int)
      returns table (id uuid, attempts int, webhook_id uuid, url text, secret text, webhook_disabled boolean,
                     event_id bigint, event_type text, event_created_at timestamptz, booking jsonb)
      language sql
      set plan_cache_mode = force_custom_plan
      set enable_bitmapscan = off
      as $$
        select fan_out_webhook_events(p_limit)
         where p_only is null
           and (select count(*) from (select 1 from webhook_deliveries d
                                       where d.status = 'pending' and d.next_attempt_at <= p_now
                                         and d.id <> all (p_in_flight) and d.webhook_id <> all (p_busy_webhooks)
                                       limit p_limit * 4) claimable) < p_limit * 4;

        with candidates as (
          select c.id, c.next_attempt_at, row_number() over (partition by c.webhook_id order by c.next_attempt_at, c.id) as place
            from (select d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
                   where d.status = 'pending' and d.next_attempt_at <= p_now and (p_only is null or d.id = p_only)
                     and d.id <> all (p_in_flight) and d.webhook_id <> all (p_busy_webhooks)
                   order by d.next_attempt_at
                   limit p_limit * 8) c
        ), due as (
          select d.id from webhook_deliveries d
           where d.id = any (array(select c.id from candidates c where c.place <= p_per_webhook order by c.next_attempt_at limit p_limit))
             -- Re-checked on the newest version of a row another claim leased meanwhile.
             and d.status = 'pending' and d.next_attempt_at <= p_now
           for update of d skip locked
        ), leased as (
          update webhook_deliveries d set next_attempt_at = p_lease_until from due where d.id = due.id
          returning d.id, d.attempts, d.webhook_id, d.event_id
        )
        select l.id, l.attempts, w.id, w.url, w.secret, w.disabled_at is not null, e.id, e.type, e.created_at, e.booking
          from leased l join webhooks w on w.id = l.webhook_id join booking_events e on e.id = l.event_id;
      $$;`);
  }
}
