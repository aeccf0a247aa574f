import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Writes one event in the caller's transaction: the log row (the outbox), its `data.booking` written by
 * `booking_item()` from the row itself (no caller hands a payload of its own), `data.previous` for a
 * booking.rescheduled (the range before the move, see reschedule_booking), and, when an endpoint of the agent
 * listens for it, a row for the webhook fan-out. Answers the event as the writer announces it after its commit:
 * `{eventId, previousEventId, agentId, type, deliveries}`.
 */
export const recordBookingEventFunction = sqlDefinition(
  'record_booking_event',
  `
create or replace function record_booking_event(p_agent uuid, p_type text, p_booking bookings, p_at timestamptz, p_previous jsonb default null)
returns jsonb language plpgsql as $$
declare
  v_event_id bigint;
  v_previous bigint;
  v_deliveries int;
begin
  -- The agent's row lock, held from before the cursor is taken until commit, makes one agent's
  -- cursors commit in order (a no-op when the caller holds it already). Other agents never wait.
  perform 1 from agents where id = p_agent for no key update;
  select max(e.id) into v_previous from booking_events e where e.agent_id = p_agent;
  insert into booking_events (agent_id, type, booking_id, booking, previous, created_at)
    values (p_agent, p_type, p_booking.id, booking_item(p_booking), p_previous, p_at)
    returning id into v_event_id;
  -- How many deliveries it brings sizes the dispatcher's claims.
  insert into webhook_fanout (event_id, deliveries)
  select v_event_id, n from (select count(*)::int as n from webhooks w where w.agent_id = p_agent and w.disabled_at is null and p_type = any (w.events)) c
   where n > 0;
  get diagnostics v_deliveries = row_count;
  return jsonb_build_object('eventId', v_event_id::text, 'previousEventId', v_previous::text, 'agentId', p_agent, 'type', p_type,
                            'deliveries', v_deliveries);
end
$$;
`,
);
