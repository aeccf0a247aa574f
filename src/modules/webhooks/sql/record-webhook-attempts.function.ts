import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { ASYNCHRONOUS_COMMIT } from './asynchronous-commit.js';

/**
 * Records a batch of attempt outcomes: the deliveries (only the attempt this process claimed) and their attempt
 * rows in one set-based statement, then the endpoints' failure counts (disabled after `p_disable_after` in a
 * row) outcome by outcome in order of finishing, for the endpoints whose count can change: one with a failure
 * in the batch or failures before it. The common batch (every attempt delivered, no endpoint failing) changes
 * no endpoint and runs no loop.
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
  with outcome as (
    select * from jsonb_to_recordset(p_attempts) as x(delivery_id uuid, webhook_id uuid, attempt int, attempted_at timestamptz,
                                                     status_code int, error text, duration_ms int, status text,
                                                     next_attempt_at timestamptz, finished_at timestamptz)
  ), delivery as (
    -- A delivery deleted meanwhile (with its webhook) or attempted again after a lapsed lease records nothing,
    -- and fails nothing else in the batch.
    update webhook_deliveries d
       set attempts = o.attempt, status = o.status, next_attempt_at = o.next_attempt_at, last_error = o.error,
           delivered_at = case when o.status = 'delivered' then o.finished_at end
      from outcome o
     where d.id = o.delivery_id and d.status = 'pending' and d.attempts = o.attempt - 1
    returning o.*
  ), attempt as (
    insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
    select r.delivery_id, r.attempt, r.attempted_at, r.status_code, r.error, r.duration_ms from delivery r
  ), changing as materialized (
    -- Each endpoint looked up once (as a semi-join it was looked up once per outcome for every outcome).
    select distinct c.webhook_id from delivery c join webhooks w on w.id = c.webhook_id
     where c.status = 'failed' or w.consecutive_failures <> 0
  )
  select jsonb_agg(jsonb_build_object('webhook_id', r.webhook_id, 'status', r.status, 'error', r.error, 'finished_at', r.finished_at))
    into v_endpoint_outcomes
    from delivery r join changing on changing.webhook_id = r.webhook_id
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
end
$$;
`,
);
