import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { ASYNCHRONOUS_COMMIT_SQL } from './asynchronous-commit.js';

/**
 * Leases due deliveries (at most `p_per_webhook` per endpoint, skipping endpoints busy in this process) for one
 * attempt each, with what sending them needs: the event's `data` (its booking, and for a reschedule the range
 * before), and the cursor of the event the endpoint was sent before this one (`previous_event_id`: the agent's
 * newest earlier event of a type the endpoint takes, since it was registered, whether or not it was delivered),
 * so that a receiver that did not get that one sees the gap.
 */
export const claimWebhookDeliveriesFunction = sqlDefinition(
  'claim_webhook_deliveries',
  `
create or replace function claim_webhook_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit int, p_only uuid,
                                                    p_in_flight uuid[], p_busy_webhooks uuid[], p_per_webhook int)
returns table (id uuid, attempts int, webhook_id uuid, url text, secret text, webhook_disabled boolean,
               event_id bigint, event_type text, event_created_at timestamptz, booking jsonb, previous jsonb, previous_event_id bigint)
language sql
set plan_cache_mode = force_custom_plan
set enable_bitmapscan = off
as $$
  ${ASYNCHRONOUS_COMMIT_SQL}
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
  select l.id, l.attempts, w.id, w.url, w.secret, w.disabled_at is not null, e.id, e.type, e.created_at, e.booking, e.previous,
         (select max(p.id) from booking_events p
           where p.agent_id = e.agent_id and p.id < e.id and p.type = any (w.events) and p.created_at >= w.created_at)
    from leased l join webhooks w on w.id = l.webhook_id join booking_events e on e.id = l.event_id;
$$;
`,
);
