import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Whether the agent holds `p_cap` live bookings already (a series counts while any of its slots has not ended), under
 * its row lock. The kept count (agent_live_bookings) is at least the live ones: under the cap it answers alone;
 * otherwise bookings that ended since it was taken may be in it, so the live ones are counted afresh and it starts
 * again from now.
 */
export const bookingCapReachedFunction = sqlDefinition(
  'booking_cap_reached',
  `
create or replace function booking_cap_reached(p_agent uuid, p_cap int, p_at timestamptz) returns boolean language plpgsql as $$
declare
  v_live int;
begin
  select c.live into v_live from agent_live_bookings c where c.agent_id = p_agent;
  if v_live is null or v_live >= p_cap then
    select count(*) into v_live from bookings b where b.agent_id = p_agent and b.status = 'confirmed' and b.live_until > p_at;
    insert into agent_live_bookings (agent_id, counted_after, live) values (p_agent, p_at, v_live)
      on conflict (agent_id) do update set counted_after = excluded.counted_after, live = excluded.live;
  end if;
  return v_live >= p_cap;
end
$$;
`,
);
