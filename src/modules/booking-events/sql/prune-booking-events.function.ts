import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Retention, one batch: reads the `p_batch` oldest events after `p_after` (the primary key's first
 * entries, so a pass costs what it deletes, however long the log), deletes those that happened before
 * `p_before`, and records per agent the newest id it deleted (`booking_events_pruned`, what makes an
 * older cursor `cursor_expired`) in the same transaction. Answers how many it deleted, the last id it
 * read (the next batch's `p_after`), and whether the pass is done: it read an event that is not old yet
 * (events are written in time order) or the end of the log.
 *
 * Webhook deliveries reference their event and go with it (`on delete cascade`, their attempts too): the
 * delivery log is kept as long as the events. An event that a delivery is still pending for, or that
 * still waits for the fan-out, is kept until that is over, so retention never cancels a delivery; the
 * next pass looks at it again.
 */
export const pruneBookingEventsFunction = sqlDefinition(
  'prune_booking_events',
  `
create or replace function prune_booking_events(p_before timestamptz, p_after bigint, p_batch int, p_at timestamptz,
                                                out deleted int, out read_through bigint, out done boolean)
language plpgsql as $$
begin
  with oldest as (
    select e.id, e.created_at < p_before as old from booking_events e where e.id > p_after order by e.id limit p_batch
  ), doomed as (
    select oldest.id from oldest
     where oldest.old
       and not exists (select 1 from webhook_deliveries d where d.event_id = oldest.id and d.status = 'pending')
       and not exists (select 1 from webhook_fanout f where f.event_id = oldest.id)
  ), removed as (
    delete from booking_events e using doomed where e.id = doomed.id
    returning e.id, e.agent_id
  ), recorded as (
    insert into booking_events_pruned as kept (agent_id, through, pruned_at)
    select removed.agent_id, max(removed.id), p_at from removed group by removed.agent_id
    on conflict (agent_id) do update set through = greatest(kept.through, excluded.through), pruned_at = excluded.pruned_at
  )
  select (select count(*)::int from removed),
         (select max(oldest.id) from oldest),
         (select count(*) < p_batch or bool_or(not oldest.old) from oldest)
    into deleted, read_through, done;
  read_through := coalesce(read_through, p_after);
end
$$;
`,
);
