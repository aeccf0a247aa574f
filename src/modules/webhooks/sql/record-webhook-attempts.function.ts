import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { ASYNCHRONOUS_COMMIT } from './asynchronous-commit.js';

/**
 * Records a batch of attempt outcomes: the deliveries (a first attempt of a queued event writes its delivery; a
 * later one updates it, only for the attempt this process claimed) and their attempt rows in one set-based
 * statement; then the endpoints' failure counts (disabled after `p_disable_after` in a row) outcome by outcome in
 * order of finishing, for the endpoints whose count can change: one with a failure in the batch or failures
 * before it (the common batch, every attempt delivered and no endpoint failing, changes no endpoint and runs no
 * loop); then the queued events whose last claimed delivery is in the batch (`completes_event`) leave the queue,
 * if every endpoint that takes them has its delivery.
 */
export const recordWebhookAttemptsFunction = sqlDefinition(
  'record_webhook_attempts',
  `
create or replace function record_webhook_attempts(p_attempts jsonb, p_disable_after int) returns void language plpgsql as $$
declare
  v_endpoint_outcomes jsonb;
  a record;
begin
  ${ASYNCHRONOUS_COMMIT}
  -- The batch's queued events first, in order: a claim of one of them (its lease ran out) that writes a waiting
  -- delivery this batch writes too then finishes before, instead of each waiting for the other.
  perform 1 from webhook_fanout f
   where f.event_id = any (array(select distinct (x->>'event_id')::bigint from jsonb_array_elements(p_attempts) x))
   order by f.event_id for no key update;
  with outcome as (
    select * from jsonb_to_recordset(p_attempts) as x(delivery_id uuid, webhook_id uuid, event_id bigint, event_created_at timestamptz,
                                                     attempt int, attempted_at timestamptz, status_code int, error text, duration_ms int,
                                                     status text, next_attempt_at timestamptz, finished_at timestamptz)
  ), delivery as (
    insert into webhook_deliveries as d (id, webhook_id, event_id, status, attempts, next_attempt_at, last_error, delivered_at, created_at)
    select o.delivery_id, o.webhook_id, o.event_id, o.status, o.attempt, o.next_attempt_at, o.error,
           case when o.status = 'delivered' then o.finished_at end, o.event_created_at
      from outcome o
     -- A delivery whose endpoint or event was deleted meanwhile records nothing, and fails nothing else in the
     -- batch (locked: they cannot go before the commit).
     where exists (select 1 from webhooks w where w.id = o.webhook_id for key share)
       and exists (select 1 from booking_events e where e.id = o.event_id for key share)
    on conflict (id) do update
       set attempts = excluded.attempts, status = excluded.status, next_attempt_at = excluded.next_attempt_at,
           last_error = excluded.last_error, delivered_at = excluded.delivered_at
     -- One attempted again after a lapsed lease (by another process) records nothing.
     where d.status = 'pending' and d.attempts = excluded.attempts - 1
    returning d.id
  ), recorded as (
    select o.* from outcome o join delivery r on r.id = o.delivery_id
  ), attempt as (
    insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
    select r.delivery_id, r.attempt, r.attempted_at, r.status_code, r.error, r.duration_ms from recorded r
  ), changing as materialized (
    -- Each endpoint looked up once (as a semi-join it was looked up once per outcome for every outcome).
    select distinct c.webhook_id from recorded c join webhooks w on w.id = c.webhook_id
     where c.status = 'failed' or w.consecutive_failures <> 0
  )
  select jsonb_agg(jsonb_build_object('webhook_id', r.webhook_id, 'status', r.status, 'error', r.error, 'finished_at', r.finished_at))
    into v_endpoint_outcomes
    from recorded r join changing on changing.webhook_id = r.webhook_id
   where r.status <> 'pending';

  for a in
    select * from jsonb_to_recordset(coalesce(v_endpoint_outcomes, '[]')) as x(webhook_id uuid, status text, error text, finished_at timestamptz)
     order by x.webhook_id, x.finished_at
  loop
    update webhooks w
       set consecutive_failures = case a.status when 'delivered' then 0 else w.consecutive_failures + 1 end,
           disabled_at = case when a.status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                              then a.finished_at else w.disabled_at end,
           disabled_reason = case when a.status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                                  then (w.consecutive_failures + 1) || ' deliveries in a row failed; last error: ' || a.error
                                  else w.disabled_reason end
     where w.id = a.webhook_id
       -- Only a failed delivery, or the first success after failures, changes the endpoint.
       and (a.status = 'failed' or (a.status = 'delivered' and w.consecutive_failures <> 0));
  end loop;

  -- A statement of its own: it must see the deliveries written above. An event some of whose outcomes were
  -- lost (a batch that failed) stays queued, and is claimed again for those endpoints when its lease ends.
  delete from webhook_fanout f
   where f.event_id = any (array(select (x->>'event_id')::bigint from jsonb_array_elements(p_attempts) x where (x->>'completes_event')::boolean))
     and not exists (select 1 from booking_events e join webhooks w on w.agent_id = e.agent_id and webhook_takes_event(w, e)
                      where e.id = f.event_id
                        and not exists (select 1 from webhook_deliveries d where d.id = webhook_delivery_id(e.id, w.id)));
end
$$;
`,
);
