import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Keeps `agent_live_bookings.live` equal to the agent's confirmed bookings whose `live_until` lies
 * after its `counted_after`, whichever writer changes a booking's status, `live_until` or owner. Only
 * rows `create_booking` has counted are kept: an agent without one is counted afresh at its next create.
 */
export const countLiveBookingsTrigger = sqlDefinition(
  'count_live_bookings',
  `
create or replace function count_live_bookings() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and old.status = 'confirmed' then
    update agent_live_bookings set live = live - 1 where agent_id = old.agent_id and old.live_until > counted_after;
  end if;
  if tg_op <> 'DELETE' and new.status = 'confirmed' then
    update agent_live_bookings set live = live + 1 where agent_id = new.agent_id and new.live_until > counted_after;
  end if;
  return null;
end;
$$;

create or replace trigger bookings_count_live after insert or delete on bookings
  for each row execute function count_live_bookings();

create or replace trigger bookings_count_live_changes after update of status, live_until, agent_id on bookings
  for each row
  when (old.status is distinct from new.status or old.live_until is distinct from new.live_until or old.agent_id is distinct from new.agent_id)
  execute function count_live_bookings();
`,
);
