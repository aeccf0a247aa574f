import { sqlDefinition } from '../../../platform/db/sql-definitions.js';
import { ASYNCHRONOUS_COMMIT_SQL } from './asynchronous-commit.js';

/**
 * Leases work for one attempt each, with what sending it needs. First deliveries that wait in the table (retries,
 * redeliveries; at most `p_per_webhook` per endpoint, skipping endpoints busy in this process; a quarter of the
 * places stays for queued events while any wait), then queued events for the places left: one answer per endpoint
 * that takes the event (`queued`, with the id its delivery will have; it is written with the attempt's outcome).
 * An event's deliveries past its endpoint's places are written as waiting deliveries instead. A queued event
 * claimed before (its process died, or a batch of its outcomes failed) is sent only to the endpoints still without
 * a delivery. Each answer carries the event's `data` (its booking, and for a reschedule the range before), and the
 * cursor of the event the endpoint was sent before this one (`previous_event_id`: the agent's newest earlier event
 * of a type the endpoint takes, since it was registered, whether or not it was delivered), so that a receiver that
 * did not get that one sees the gap.
 *
 * Places are counted in deliveries (a queued event's as its writer counted its endpoints); the last event taken may
 * bring a claim past `p_limit` by fewer deliveries than an agent has endpoints. The queued events locked are as
 * many as the oldest claimable ones that fill the places (claims at once skip them and take the next).
 */
export const claimWebhookDeliveriesFunction = sqlDefinition(
  'claim_webhook_deliveries',
  `
create or replace function claim_webhook_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit int, p_only uuid,
                                                    p_in_flight uuid[], p_busy_webhooks uuid[], p_per_webhook int)
returns table (id uuid, attempts int, webhook_id uuid, url text, secret text, webhook_disabled boolean,
               event_id bigint, event_type text, event_created_at timestamptz, booking jsonb, previous jsonb, previous_event_id bigint,
               queued boolean)
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
  ), reserved as (
    -- A quarter of the places (one of two to four, none of one) is kept for queued events while any wait: new
    -- events never queue behind a backlog of retries, nor retries behind a burst.
    select case when p_only is null and exists (select 1 from webhook_fanout q where q.leased_until is null or q.leased_until <= p_now)
                then least((p_limit + 3) / 4, p_limit - 1) else 0 end as n
  ), due as (
    select d.id from webhook_deliveries d
     where d.id = any (array(select c.id from candidates c where c.place <= p_per_webhook order by c.next_attempt_at
                              limit p_limit - (select n from reserved)))
       -- Re-checked on the newest version of a row another claim leased meanwhile.
       and d.status = 'pending' and d.next_attempt_at <= p_now
     for update of d skip locked
  ), leased as (
    update webhook_deliveries d set next_attempt_at = p_lease_until from due where d.id = due.id
    returning d.id, d.attempts, d.webhook_id, d.event_id
  ), places as (
    select greatest(p_limit - (select count(*) from due), 0) as n
  ), needed as (
    -- How many events fill the places left (each brings about \`deliveries\`), judged on the oldest claimable ones
    -- without locking them: only that many are locked next.
    select count(*) as n from (
      select sum(q.deliveries) over (order by q.event_id) - q.deliveries as before_event
        from (select q.event_id, q.deliveries from webhook_fanout q
               where p_only is null and (q.leased_until is null or q.leased_until <= p_now)
               order by q.event_id limit (select n from places)) q
    ) c
     where c.before_event < (select n from places)
  ), queued as (
    -- Locked before the limit, so that claims at once take different events; those that start within the places
    -- left are taken.
    select c.event_id, c.claimed_before from (
      select q.event_id, q.claimed_before, sum(q.deliveries) over (order by q.event_id) - q.deliveries as before_event
        from (select q.event_id, q.deliveries, q.leased_until is not null as claimed_before from webhook_fanout q
               where p_only is null and (q.leased_until is null or q.leased_until <= p_now)
               order by q.event_id limit (select n from needed)
                 for update skip locked) q
    ) c
     where c.before_event < (select n from places)
  ), expansion as (
    select e.id as event_id, e.created_at as event_created_at, w.id as webhook_id, webhook_delivery_id(e.id, w.id) as delivery_id,
           t.claimed_before, row_number() over (partition by w.id order by e.id) as place
      from queued t
      join booking_events e on e.id = t.event_id
      join webhooks w on w.agent_id = e.agent_id and webhook_takes_event(w, e)
  ), taken as (
    select x.*,
           -- An endpoint's places in this claim go first to its waiting deliveries.
           x.webhook_id = any (p_busy_webhooks) or x.place + (select count(*) from leased l where l.webhook_id = x.webhook_id) > p_per_webhook as parked
      from expansion x
     -- Claimed before (its process died, or a batch of its outcomes failed): only the endpoints without a delivery,
     -- and never one still in flight here after a lapsed lease.
     where not x.claimed_before
        or (x.delivery_id <> all (p_in_flight) and not exists (select 1 from webhook_deliveries d where d.id = x.delivery_id))
  ), emptied as (
    -- Nothing left to send here: every endpoint has its delivery (recorded before, or waiting from this claim on),
    -- or is gone, and none is still in flight.
    delete from webhook_fanout f
     where f.event_id = any (array(select t.event_id from queued t
                                    where not exists (select 1 from taken x where x.event_id = t.event_id and not x.parked)
                                      and not exists (select 1 from expansion x where x.event_id = t.event_id and x.delivery_id = any (p_in_flight))))
  ), held as (
    update webhook_fanout f set leased_until = p_lease_until where f.event_id = any (array(select distinct t.event_id from taken t where not t.parked))
  ), waiting as (
    insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
    select t.delivery_id, t.webhook_id, t.event_id, 'pending', 0, t.event_created_at, t.event_created_at from taken t where t.parked
    on conflict (id) do nothing
  ), answer as (
    select l.id, l.attempts, l.webhook_id, l.event_id, false as queued from leased l
    union all
    select t.delivery_id, 0, t.webhook_id, t.event_id, true from taken t where not t.parked
  )
  select a.id, a.attempts, w.id, w.url, w.secret, w.disabled_at is not null, e.id, e.type, e.created_at, e.booking, e.previous,
         (select max(p.id) from booking_events p
           where p.agent_id = e.agent_id and p.id < e.id and p.type = any (w.events) and p.created_at >= w.created_at),
         a.queued
    from answer a join webhooks w on w.id = a.webhook_id join booking_events e on e.id = a.event_id;
$$;
`,
);
