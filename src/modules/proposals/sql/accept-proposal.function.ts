import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Accepts a pending proposal in one transaction: both agents' row locks (in id order); the target's time rules, which
 * bind what the proposer takes from it (working hours, notice, advance: slot_refusals with the proposer as caller);
 * the proposer's own rules if it enforces them (booking_refusal); the expired holds in the way (booking_purge_expired_holds); the conditional
 * status update; the slot moved (a single booking whole, one occurrence of a series out of it) or a new booking for
 * the proposer; and the events. A refusal (`{"refused": <reason>}`) leaves the proposal pending.
 */
export const acceptProposalFunction = sqlDefinition(
  'accept_proposal',
  `
create or replace function accept_proposal(p_actor uuid, p_proposal uuid, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_proposal proposals;
  v_source bookings;
  v_booking bookings;
  v_events jsonb;
  v_range tstzrange;
  v_refusal jsonb;
begin
  select * into v_proposal from proposals where id = p_proposal;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_proposal.target_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id in (v_proposal.proposer_agent_id, v_proposal.target_agent_id) order by id for no key update;
  v_range := tstzrange(v_proposal.starts_at, v_proposal.ends_at, '[)');
  if (select status from proposals where id = p_proposal) = 'pending' then
    select reason || jsonb_build_object('agentId', v_proposal.target_agent_id) into v_refusal
      from jsonb_array_elements(slot_refusals(v_proposal.proposer_agent_id, v_proposal.target_agent_id, array[v_range], p_at, null, 20)) as reason
     where reason->>'code' in ('outside_working_hours', 'notice_too_short', 'too_far_ahead')
     limit 1;
    if v_refusal is null then
      v_refusal := booking_refusal(v_proposal.proposer_agent_id, v_proposal.proposer_agent_id, array[v_range], p_at, null)
                   || jsonb_build_object('agentId', v_proposal.proposer_agent_id);
    end if;
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;
  end if;
  update proposals set status = 'accepted', decided_at = p_at where id = p_proposal and status = 'pending'
  returning * into v_proposal;
  if not found then
    return jsonb_build_object('notPending', (select status from proposals where id = p_proposal));
  end if;

  -- The overlap test (blocked ranges contain their slots) lets the exclusion constraint's GiST index find the slot.
  select b.* into v_source
    from booking_slots s join bookings b on b.id = s.booking_id
   where s.agent_id = v_proposal.target_agent_id
     and tstzrange(s.blocked_from, s.blocked_until, '[)') && v_range
     and s.starts_at = v_proposal.starts_at and s.ends_at = v_proposal.ends_at and b.status = 'confirmed'
   limit 1;

  -- The proposer's expired holds in the way go whichever way the slot comes to it (moved or new).
  perform booking_purge_expired_holds(v_proposal.proposer_agent_id, array[v_range], p_at);
  if v_source.id is not null and v_source.rrule is null then
    v_booking := booking_transfer(v_source.id, v_proposal.proposer_agent_id);
  else
    if v_source.id is not null then
      -- The proposal asks for one slot: the rest of the series stays with the target.
      perform booking_exclude_occurrences(v_source.id, array[v_proposal.starts_at]);
    end if;
    v_booking := booking_insert(gen_random_uuid(), v_proposal.proposer_agent_id, v_proposal.starts_at, v_proposal.ends_at, null, '[]'::jsonb, p_at,
                                jsonb_build_array(jsonb_build_object('starts_at', v_proposal.starts_at, 'ends_at', v_proposal.ends_at)), null);
  end if;

  v_events := jsonb_build_array(record_booking_event(v_proposal.proposer_agent_id, 'booking.created', v_booking, p_at));
  if v_source.id is not null then
    v_events := v_events || jsonb_build_array(record_booking_event(v_proposal.target_agent_id, 'booking.transferred', v_booking, p_at));
  end if;
  update proposals set booking_id = v_booking.id where id = p_proposal returning * into v_proposal;
  return jsonb_build_object('proposal', to_jsonb(v_proposal), 'booking', booking_item(v_booking), 'events', v_events);
end
$$;
`,
);
