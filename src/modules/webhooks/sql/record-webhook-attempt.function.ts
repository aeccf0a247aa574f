import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Records one attempt's outcome: the delivery (only the attempt this process claimed), the attempt row, and the
 * endpoint's failure count (disabled after `p_disable_after` in a row).
 */
export const recordWebhookAttemptFunction = sqlDefinition(
  'record_webhook_attempt',
  `
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
$$;
`,
);
