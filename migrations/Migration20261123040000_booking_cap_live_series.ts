import { Migration } from '@mikro-orm/migrations';

/**
 * The booking cap counts live bookings, and a proposal moves one occurrence of a series.
 *
 * - `bookings.live_until`: the end of the booking's last materialised slot (a single booking's own
 *   `ends_at`; a series' last occurrence up to the horizon, moved on by the nightly extension; null
 *   when no slot is left). A confirmed booking counts against `BOOKING_CAP` while `live_until` is in
 *   the future, so a series that started yesterday counts, once, however many slots lie ahead, and
 *   stops counting when its last slot has ended or its remaining occurrences were cancelled. The cap
 *   was `ends_at > now`, which for a series is only its first occurrence.
 * - The count stays one bounded range scan (`limit p_cap`) on `bookings_agent_live_until_idx`; the
 *   index it replaces (`bookings_agent_live_ends_idx`) served nothing else.
 * - `accept_proposal`: the target's slot of exactly the proposal's range is looked up among its slots.
 *   A single booking moves whole, as before; an occurrence of a series leaves the series (an EXDATE,
 *   its slot freed) and the proposer gets a single booking of that range. Before, a series whose
 *   first occurrence matched moved whole, every future occurrence with it.
 */
export class Migration20261123040000_booking_cap_live_series extends Migration {
  override up(): void {
    this.addSql(`alter table bookings add column live_until timestamptz null;`);
    this.addSql(`
      update bookings b set live_until = s.last
        from (select booking_id, max(ends_at) as last from booking_slots group by booking_id) s
       where s.booking_id = b.id;`);
    this.addSql(`drop index bookings_agent_live_ends_idx;`);
    this.addSql(`create index bookings_agent_live_until_idx on bookings (agent_id, live_until) where status = 'confirmed';`);

    this.addSql(`
      create or replace function create_booking(p_booking jsonb, p_slots jsonb, p_cap int, p_key text, p_request_hash text,
                                                p_key_valid_after timestamptz, p_at timestamptz)
      returns jsonb language plpgsql as $$
      declare
        v_agent uuid := (p_booking->>'agentId')::uuid;
        v_id uuid := (p_booking->>'id')::uuid;
        v_stored record;
        v_live int;
        v_event record;
      begin
        perform 1 from agents where id = v_agent for no key update;
        if p_key is not null then
          select k.request_hash, k.outcome into v_stored from idempotency_keys k
           where k.agent_id = v_agent and k.operation = 'create_booking' and k.key = p_key and k.created_at >= p_key_valid_after;
          if found then
            if v_stored.request_hash <> p_request_hash then return '{"conflict": true}'::jsonb; end if;
            return jsonb_build_object('replay', v_stored.outcome);
          end if;
        end if;
        -- Live bookings, counted no further than the cap: a series counts while any of its slots has not ended.
        select count(*) into v_live
          from (select 1 from bookings b where b.agent_id = v_agent and b.status = 'confirmed' and b.live_until > p_at limit p_cap) live;
        if v_live >= p_cap then return '{"refused": "booking_cap_reached"}'::jsonb; end if;

        insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
          values (v_id, v_agent, (p_booking->>'startsAt')::timestamptz, (p_booking->>'endsAt')::timestamptz, 'confirmed',
                  p_booking->>'rrule', '[]'::jsonb, (p_booking->>'createdAt')::timestamptz,
                  (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz)));
        insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
        select v_id, v_agent, s.starts_at, s.ends_at
          from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
        if p_key is not null then
          insert into idempotency_keys (agent_id, operation, key, request_hash, outcome, created_at)
          values (v_agent, 'create_booking', p_key, p_request_hash, jsonb_build_object('ok', p_booking), p_at)
          on conflict (agent_id, operation, key) do update
            set request_hash = excluded.request_hash, outcome = excluded.outcome, created_at = excluded.created_at;
        end if;
        select * into v_event from record_booking_event(v_agent, 'booking.created', p_booking, p_at);
        return jsonb_build_object('events', jsonb_build_array(jsonb_build_object(
          'eventId', v_event.event_id::text, 'previousEventId', v_event.previous_event_id::text, 'agentId', v_agent, 'type', 'booking.created')),
          'deliveries', v_event.deliveries);
      end
      $$;`);

    // Accepting a proposal in one call: both agents locked in id order, the conditional status update,
    // then the target's slot of exactly that range: a single booking moves to the proposer; an
    // occurrence of a series leaves the series and becomes the proposer's single booking; with no such
    // slot a new booking is created for the proposer. An overlap on the proposer's calendar raises
    // 23P01 and nothing is kept (the series keeps its occurrence).
    this.addSql(`
      create or replace function accept_proposal(p_actor uuid, p_proposal uuid, p_at timestamptz) returns jsonb language plpgsql as $$
      declare
        v_proposal proposals;
        v_source bookings;
        v_booking bookings;
        v_created record;
        v_transferred record;
        v_events jsonb;
        v_deliveries int;
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
          update bookings set agent_id = v_proposal.proposer_agent_id where id = v_source.id returning * into v_booking;
          update booking_slots set agent_id = v_proposal.proposer_agent_id where booking_id = v_booking.id;
        else
          if v_source.id is not null then
            -- The proposal asks for one slot: the rest of the series stays with the target.
            delete from booking_slots where booking_id = v_source.id and starts_at = v_proposal.starts_at;
            update bookings
               set exdates = exdates || jsonb_build_array(to_char(v_proposal.starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
                   live_until = (select max(s.ends_at) from booking_slots s where s.booking_id = v_source.id)
             where id = v_source.id;
          end if;
          insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
          values (gen_random_uuid(), v_proposal.proposer_agent_id, v_proposal.starts_at, v_proposal.ends_at, 'confirmed', null, '[]'::jsonb, p_at,
                  v_proposal.ends_at)
          returning * into v_booking;
          insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
          values (v_booking.id, v_booking.agent_id, v_booking.starts_at, v_booking.ends_at);
        end if;

        select * into v_created from record_booking_event(v_proposal.proposer_agent_id, 'booking.created', booking_item(v_booking), p_at);
        v_events := jsonb_build_array(
          jsonb_build_object('eventId', v_created.event_id::text, 'previousEventId', v_created.previous_event_id::text,
                             'agentId', v_proposal.proposer_agent_id, 'type', 'booking.created'));
        v_deliveries := v_created.deliveries;
        if v_source.id is not null then
          select * into v_transferred from record_booking_event(v_proposal.target_agent_id, 'booking.transferred', booking_item(v_booking), p_at);
          v_events := v_events || jsonb_build_array(
            jsonb_build_object('eventId', v_transferred.event_id::text, 'previousEventId', v_transferred.previous_event_id::text,
                               'agentId', v_proposal.target_agent_id, 'type', 'booking.transferred'));
          v_deliveries := v_deliveries + v_transferred.deliveries;
        end if;
        update proposals set booking_id = v_booking.id where id = p_proposal returning * into v_proposal;
        return jsonb_build_object('proposal', to_jsonb(v_proposal), 'booking', booking_item(v_booking), 'events', v_events,
                                  'deliveries', v_deliveries);
      end
      $$;`);
  }
}
