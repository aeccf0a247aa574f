import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { ASYNCHRONOUS_COMMIT_SQL } from './asynchronous-commit.js';

/**
 * Turns queued events into deliveries, one per matching endpoint, a batch at a time, apart from the writes that
 * queued them.
 */
export const fanOutWebhookEventsFunction = sqlDefinition(
  'fan_out_webhook_events',
  `
create or replace function fan_out_webhook_events(p_now timestamptz, p_busy_webhooks uuid[], p_due_below int, p_events int)
returns int language sql
set plan_cache_mode = force_custom_plan
set enable_bitmapscan = off
as $$
  ${ASYNCHRONOUS_COMMIT_SQL}
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
$$;
`,
);
