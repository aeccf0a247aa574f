import { Migration } from '@mikro-orm/migrations';

/**
 * The dispatcher's claim no longer depends on how fresh the planner's statistics are.
 *
 * `webhook_deliveries` is a queue: during a burst thousands of rows fall due between two autovacuum
 * analyses, so the planner believed a hundred rows were due and chose bitmap scans of the whole due set
 * plus sorts. `BENCH_SQL_STATS=1` measured the claim at 49 ms per call during S5 (a third of a core);
 * with 120,000 due rows and statistics from before they existed, 142 ms. The candidates are now read in
 * index order (bitmap scans off for this function only) and locked through the primary key
 * (`id = any (array(…))`), whatever the estimate: 3 ms for the same table, stale or fresh statistics.
 *
 * Recording an attempt no longer rewrites the endpoint's row when nothing about it changes (a success
 * with no failures before it, or a retry scheduled): one row version fewer per delivery.
 */
export class Migration20261123050000_webhook_claim_index_order extends Migration {
  override up(): void {
    this.addSql(`
      create or replace function claim_webhook_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit int, p_only uuid,
                                                          p_in_flight uuid[], p_busy_webhooks uuid[], p_per_webhook int)
      returns table (id uuid, attempts int, webhook_id uuid, url text, secret text, webhook_disabled boolean,
                     event_id bigint, event_type text, event_created_at timestamptz, booking jsonb)
      language sql
      set plan_cache_mode = force_custom_plan
      set enable_bitmapscan = off
      as $$
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

    this.addSql(`
      create or replace function record_webhook_attempt(p_delivery uuid, p_attempt int, p_attempted_at timestamptz, p_status_code int,
                                                        p_error text, p_duration_ms int, p_status text, p_next_attempt_at timestamptz,
                                                        p_finished_at timestamptz, p_disable_after int)
      returns void language sql as $$
        with delivery as (
          -- Only the attempt this process claimed: a delivery deleted meanwhile (with its webhook) or
          -- attempted again after a lapsed lease records nothing, and fails nothing else in the batch.
          update webhook_deliveries
             set attempts = p_attempt, status = p_status, next_attempt_at = p_next_attempt_at, last_error = p_error,
                 delivered_at = case when p_status = 'delivered' then p_finished_at end
           where id = p_delivery and status = 'pending' and attempts = p_attempt - 1
          returning id, webhook_id
        ), attempt as (
          insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
          select delivery.id, p_attempt, p_attempted_at, p_status_code, p_error, p_duration_ms from delivery
        )
        update webhooks w
           set consecutive_failures = case p_status when 'delivered' then 0 else w.consecutive_failures + 1 end,
               disabled_at = case when p_status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                                  then p_finished_at else w.disabled_at end,
               disabled_reason = case when p_status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                                      then (w.consecutive_failures + 1) || ' deliveries in a row failed; last error: ' || p_error
                                      else w.disabled_reason end
          from delivery
         where w.id = delivery.webhook_id
           -- Only a failed delivery, or the first success after failures, changes the endpoint.
           and (p_status = 'failed' or (p_status = 'delivered' and w.consecutive_failures <> 0));
      $$;`);
  }
}
