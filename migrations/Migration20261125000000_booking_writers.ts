import { Migration } from '@mikro-orm/migrations';

/**
 * One writer for the booking aggregate (a booking row and its slots): six functions, and every
 * change to either table goes through them, whichever operation asks.
 *
 * - `booking_insert`: a confirmed booking with its slots, `live_until` from the slots.
 * - `booking_transfer`: a single booking moves whole to another agent (row and slots).
 * - `booking_exclude_occurrences`: occurrences leave a series (EXDATEs, their slots freed, `live_until`
 *   recomputed).
 * - `booking_extend_series`: a series' next occurrences become slots (the nightly horizon extension),
 *   except those another booking took meanwhile, which leave the series.
 * - `booking_cancel`: soft-cancel of the owner's confirmed booking, its slots freed.
 * - `booking_mark_reminded`: the reminder's mark, once, on a confirmed booking that has not started.
 *
 * Before, `accept_proposal` (a proposal operation) inserted and moved bookings and slots itself, and
 * removing an occurrence was written twice: in `accept_proposal` and in the service's
 * `cancelOccurrence`. `create_booking`, `cancel_booking` and `accept_proposal` are restated here
 * calling the writers and otherwise unchanged: the same locks, outcomes and events.
 *
 * The writers take no locks and write no events: their callers hold the agent's row lock, as every
 * calendar write does, and record the event the operation means (booking.created, .cancelled,
 * .transferred) in the same transaction.
 */
export class Migration20261125000000_booking_writers extends Migration {
  override up(): void {
    this.addSql(`
      create function booking_insert(p_id uuid, p_agent uuid, p_starts_at timestamptz, p_ends_at timestamptz, p_rrule text,
                                     p_created_at timestamptz, p_slots jsonb)
      returns bookings language plpgsql as $$
      declare
        v_booking bookings;
      begin
        insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
        values (p_id, p_agent, p_starts_at, p_ends_at, 'confirmed', p_rrule, '[]'::jsonb, p_created_at,
                (select max(s.ends_at) from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz)))
        returning * into v_booking;
        insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
        select p_id, p_agent, s.starts_at, s.ends_at
          from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz);
        return v_booking;
      end
      $$;`);

    this.addSql(`
      create function booking_transfer(p_booking uuid, p_to uuid) returns bookings language plpgsql as $$
      declare
        v_booking bookings;
      begin
        update bookings set agent_id = p_to where id = p_booking returning * into v_booking;
        update booking_slots set agent_id = p_to where booking_id = p_booking;
        return v_booking;
      end
      $$;`);

    // EXDATEs are stored as JavaScript's toISOString writes them (UTC, milliseconds).
    this.addSql(`
      create function booking_exclude_occurrences(p_booking uuid, p_starts_at timestamptz[]) returns bookings language plpgsql as $$
      declare
        v_booking bookings;
      begin
        delete from booking_slots where booking_id = p_booking and starts_at = any(p_starts_at);
        -- An occurrence already excluded is not listed twice.
        update bookings
           set exdates = exdates || (select coalesce(jsonb_agg(distinct e.exdate), '[]'::jsonb)
                                       from (select to_char(d at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as exdate from unnest(p_starts_at) as d) e
                                      where not exdates @> jsonb_build_array(e.exdate)),
               -- A series whose remaining slots are all gone stops counting against the cap.
               live_until = (select max(s.ends_at) from booking_slots s where s.booking_id = p_booking)
         where id = p_booking
        returning * into v_booking;
        return v_booking;
      end
      $$;`);

    // The candidates another slot of the agent overlaps leave the series (EXDATEs: the time was taken
    // while it lay beyond the horizon); the others become slots. Answers how many of each.
    this.addSql(`
      create function booking_extend_series(p_booking uuid, p_candidates jsonb) returns jsonb language plpgsql as $$
      declare
        v_agent uuid;
        v_taken timestamptz[];
        v_added int;
      begin
        select agent_id into v_agent from bookings where id = p_booking;
        select coalesce(array_agg(distinct o.starts_at), '{}') into v_taken
          from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
         where exists (select 1 from booking_slots s
                        where s.agent_id = v_agent and tstzrange(s.starts_at, s.ends_at, '[)') && tstzrange(o.starts_at, o.ends_at, '[)'));
        if cardinality(v_taken) > 0 then
          perform booking_exclude_occurrences(p_booking, v_taken);
        end if;
        insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
        select p_booking, v_agent, o.starts_at, o.ends_at
          from jsonb_to_recordset(p_candidates) as o(starts_at timestamptz, ends_at timestamptz)
         where o.starts_at <> all(v_taken);
        get diagnostics v_added = row_count;
        -- The series counts against the cap as long as its materialised slots reach.
        update bookings set live_until = (select max(s.ends_at) from booking_slots s where s.booking_id = p_booking) where id = p_booking;
        return jsonb_build_object('added', v_added, 'skipped', cardinality(v_taken));
      end
      $$;`);

    // Null when the owner has no such confirmed booking (missing, someone else's, or cancelled already).
    this.addSql(`
      create function booking_cancel(p_booking uuid, p_owner uuid, p_at timestamptz) returns bookings language plpgsql as $$
      declare
        v_booking bookings;
      begin
        update bookings set status = 'cancelled', cancelled_at = p_at
         where id = p_booking and agent_id = p_owner and status = 'confirmed'
        returning * into v_booking;
        if found then
          delete from booking_slots where booking_id = p_booking;
        end if;
        return v_booking;
      end
      $$;`);

    // Null when there is nothing to remind: cancelled, started, or reminded already.
    this.addSql(`
      create function booking_mark_reminded(p_booking uuid, p_at timestamptz) returns bookings language plpgsql as $$
      declare
        v_booking bookings;
      begin
        update bookings set warning_sent_at = p_at
         where id = p_booking and status = 'confirmed' and warning_sent_at is null and starts_at > p_at
        returning * into v_booking;
        return v_booking;
      end
      $$;`);

    this.addSql(`
      create or replace function create_booking(p_booking jsonb, p_slots jsonb, p_cap int, p_key text, p_request_hash text,
                                                p_key_valid_after timestamptz, p_at timestamptz)
      returns jsonb language plpgsql as $$
      declare
        v_agent uuid := (p_booking->>'agentId')::uuid;
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

        perform booking_insert((p_booking->>'id')::uuid, v_agent, (p_booking->>'startsAt')::timestamptz, (p_booking->>'endsAt')::timestamptz,
                               p_booking->>'rrule', (p_booking->>'createdAt')::timestamptz, p_slots);
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

    this.addSql(`
      create or replace function cancel_booking(p_agent uuid, p_booking uuid, p_at timestamptz) returns jsonb language plpgsql as $$
      declare
        v_booking bookings;
        v_event record;
      begin
        perform 1 from agents where id = p_agent for no key update;
        v_booking := booking_cancel(p_booking, p_agent, p_at);
        if v_booking.id is null then
          select * into v_booking from bookings where id = p_booking;
          if not found then return '{"missing": true}'::jsonb; end if;
          if v_booking.agent_id <> p_agent then return '{"forbidden": true}'::jsonb; end if;
          return jsonb_build_object('booking', booking_item(v_booking));
        end if;
        select * into v_event from record_booking_event(p_agent, 'booking.cancelled', booking_item(v_booking), p_at);
        return jsonb_build_object('booking', booking_item(v_booking), 'events', jsonb_build_array(jsonb_build_object(
          'eventId', v_event.event_id::text, 'previousEventId', v_event.previous_event_id::text, 'agentId', p_agent, 'type', 'booking.cancelled')),
          'deliveries', v_event.deliveries);
      end
      $$;`);

    // Accepting a proposal in one call: both agents locked in id order, the conditional status update,
    // then the target's slot of exactly the proposal's range: a single booking moves to the proposer;
    // an occurrence of a series leaves the series and becomes the proposer's single booking; with no
    // such slot a new booking is created for the proposer. An overlap on the proposer's calendar
    // raises 23P01 and nothing is kept (the series keeps its occurrence).
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
          v_booking := booking_transfer(v_source.id, v_proposal.proposer_agent_id);
        else
          if v_source.id is not null then
            -- The proposal asks for one slot: the rest of the series stays with the target.
            perform booking_exclude_occurrences(v_source.id, array[v_proposal.starts_at]);
          end if;
          v_booking := booking_insert(gen_random_uuid(), v_proposal.proposer_agent_id, v_proposal.starts_at, v_proposal.ends_at, null, p_at,
                                      jsonb_build_array(jsonb_build_object('starts_at', v_proposal.starts_at, 'ends_at', v_proposal.ends_at)));
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
