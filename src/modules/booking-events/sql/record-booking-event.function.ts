import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Writes one event in the caller's transaction: the log row (the outbox) and, when an endpoint of the agent
 * listens for it, a row for the webhook fan-out.
 */
export const recordBookingEventFunction = sqlDefinition(
  'record_booking_event',
  `
create or replace function record_booking_event(p_agent uuid, p_type text, p_booking jsonb, p_at timestamptz,
                                                out event_id bigint, out previous_event_id bigint, out deliveries int)
language plpgsql as $$
begin
  -- The agent's row lock, held from before the cursor is taken until commit, makes one agent's
  -- cursors commit in order (a no-op when the caller holds it already). Other agents never wait.
  perform 1 from agents where id = p_agent for no key update;
  select max(e.id) into previous_event_id from booking_events e where e.agent_id = p_agent;
  insert into booking_events (agent_id, type, booking_id, booking, created_at)
    values (p_agent, p_type, (p_booking->>'id')::uuid, p_booking, p_at)
    returning id into event_id;
  insert into webhook_fanout (event_id)
  select record_booking_event.event_id
   where exists (select 1 from webhooks w where w.agent_id = p_agent and w.disabled_at is null and p_type = any (w.events));
  get diagnostics deliveries = row_count;
end
$$;
`,
);
