import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Accepts a pending proposal in one transaction: both agents' row locks (in id order), the conditional status
 * update, the slot moved (a single booking whole, one occurrence of a series out of it) or a new booking for the
 * proposer, and the events.
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
begin
  select * into v_proposal from proposals where id = p_proposal;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_proposal.target_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id in (v_proposal.proposer_agent_id, v_proposal.target_agent_id) order by id for no key update;
  update proposals set status = 'accepted', decided_at = p_at where id = p_proposal and status = 'pending'
  returning * into v_proposal;
  if not found then
    return jsonb_build_object('notPending', (select status from proposals where id = p_proposal));
  end if;

  -- The overlap test lets the exclusion constraint's GiST index find the slot.
  select b.* into v_source
    from booking_slots s join bookings b on b.id = s.booking_id
   where s.agent_id = v_proposal.target_agent_id
     and tstzrange(s.starts_at, s.ends_at, '[)') && tstzrange(v_proposal.starts_at, v_proposal.ends_at, '[)')
     and s.starts_at = v_proposal.starts_at and s.ends_at = v_proposal.ends_at and b.status = 'confirmed'
   limit 1;

  if v_source.id is not null and v_source.rrule is null then
    v_booking := booking_transfer(v_source.id, v_proposal.proposer_agent_id);
  else
    if v_source.id is not null then
      -- The proposal asks for one slot: the rest of the series stays with the target.
      perform booking_exclude_occurrences(v_source.id, array[v_proposal.starts_at]);
    end if;
    v_booking := booking_insert(gen_random_uuid(), v_proposal.proposer_agent_id, v_proposal.starts_at, v_proposal.ends_at, null, p_at,
                                jsonb_build_array(jsonb_build_object('starts_at', v_proposal.starts_at, 'ends_at', v_proposal.ends_at)));
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
