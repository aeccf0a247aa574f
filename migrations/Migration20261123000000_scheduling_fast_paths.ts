import { Migration } from '@mikro-orm/migrations';

/** Kept identical to the `@Trigger` on the Agent entity (MikroORM compares trigger bodies). */
export const AGENT_CREDENTIAL_CHANGED_BODY = `
  perform pg_notify('agent_credentials', old.token_hash);
  return null;
`;

/**
 * Booking writes no longer run one at a time for the whole installation.
 *
 * - Events: `record_booking_event` took one advisory lock for the database and sent a NOTIFY and a
 *   job per webhook inside the writing transaction (PostgreSQL's notify queue lock is global and held
 *   through the commit). An agent's events are now ordered by that agent's row lock alone, each event
 *   names the agent's previous one (so a reader sees a gap), and announcements leave after commit
 *   from the application. Deliveries are claimed from their own table by a dispatcher instead of one
 *   job each; reminders are found by a sweep over an index instead of one job per booking.
 * - `create_booking`, `cancel_booking`, `accept_proposal`: each write (locks, rules, rows, event) is
 *   one call.
 * - Window reads use a range index, so their cost does not grow with an agent's past.
 * - A changed or removed agent tells every process to drop its cached credential.
 */
export class Migration20261123000000_scheduling_fast_paths extends Migration {
  override up(): void {
    // Deliveries are claimed straight from their table by the dispatcher; the job queue no longer holds
    // one job per delivery. Pending ones from before get a due time and lose their queued job.
    this.addSql(`update webhook_deliveries set next_attempt_at = coalesce(next_attempt_at, created_at) where status = 'pending';`);
    this.addSql(`select graphile_worker.remove_job('delivery:' || id::text) from webhook_deliveries where status = 'pending';`);
    this.addSql(`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';`);

    this.addSql(`
      create index bookings_reminder_due_idx on bookings (starts_at)
        where status = 'confirmed' and warning_sent_at is null;`);
    this.addSql(`create index bookings_agent_range_idx on bookings using gist (agent_id, tstzrange(starts_at, ends_at, '[)'));`);

    this.addSql(`drop function record_booking_event(uuid, text, jsonb, timestamptz);`);
    this.addSql(`
      create function record_booking_event(p_agent uuid, p_type text, p_booking jsonb, p_at timestamptz,
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
        -- Due at once: the dispatcher claims them after the commit.
        insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
        select gen_random_uuid(), w.id, record_booking_event.event_id, 'pending', 0, p_at, p_at
          from webhooks w
         where w.agent_id = p_agent and w.disabled_at is null and p_type = any (w.events);
        get diagnostics deliveries = row_count;
      end
      $$;`);

    // One call creates a booking: lock, idempotent replay, cap (counted no further than the cap),
    // the booking, its slots under the exclusion constraint, the stored outcome and the event.
    // Refusals come back as a value; an overlap raises 23P01 like any insert.
    this.addSql(`
      create function create_booking(p_booking jsonb, p_slots jsonb, p_cap int, p_key text, p_request_hash text,
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
        select count(*) into v_live
          from (select 1 from bookings b where b.agent_id = v_agent and b.status = 'confirmed' and b.ends_at > p_at limit p_cap) live;
        if v_live >= p_cap then return '{"refused": "booking_cap_reached"}'::jsonb; end if;

        insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at)
          values (v_id, v_agent, (p_booking->>'startsAt')::timestamptz, (p_booking->>'endsAt')::timestamptz, 'confirmed',
                  p_booking->>'rrule', '[]'::jsonb, (p_booking->>'createdAt')::timestamptz);
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

    // A booking as the seed's BookingItem (UTC, milliseconds, like JavaScript's toISOString): the
    // payload of events written by the functions below.
    this.addSql(`
      create function booking_item(b bookings) returns jsonb language sql stable as $$
        select jsonb_build_object(
          'id', b.id, 'agentId', b.agent_id,
          'startsAt', to_char(b.starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'endsAt', to_char(b.ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'status', b.status, 'rrule', b.rrule,
          'warningSentAt', to_char(b.warning_sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'createdAt', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
      $$;`);

    // Soft-cancel in one call: the caller's booking only, its slots freed, the event written.
    this.addSql(`
      create function cancel_booking(p_agent uuid, p_booking uuid, p_at timestamptz) returns jsonb language plpgsql as $$
      declare
        v_booking bookings;
        v_event record;
      begin
        perform 1 from agents where id = p_agent for no key update;
        update bookings set status = 'cancelled', cancelled_at = p_at
         where id = p_booking and agent_id = p_agent and status = 'confirmed'
        returning * into v_booking;
        if not found then
          select * into v_booking from bookings where id = p_booking;
          if not found then return '{"missing": true}'::jsonb; end if;
          if v_booking.agent_id <> p_agent then return '{"forbidden": true}'::jsonb; end if;
          return jsonb_build_object('booking', booking_item(v_booking));
        end if;
        delete from booking_slots where booking_id = p_booking;
        select * into v_event from record_booking_event(p_agent, 'booking.cancelled', booking_item(v_booking), p_at);
        return jsonb_build_object('booking', booking_item(v_booking), 'events', jsonb_build_array(jsonb_build_object(
          'eventId', v_event.event_id::text, 'previousEventId', v_event.previous_event_id::text, 'agentId', p_agent, 'type', 'booking.cancelled')),
          'deliveries', v_event.deliveries);
      end
      $$;`);

    // Accepting a proposal in one call: both agents locked in id order, the conditional status update,
    // the target's booking of exactly that range moved to the proposer (or a new one created), the
    // events. An overlap on the proposer's calendar raises 23P01 and nothing is kept.
    this.addSql(`
      create function accept_proposal(p_actor uuid, p_proposal uuid, p_at timestamptz) returns jsonb language plpgsql as $$
      declare
        v_proposal proposals;
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

        update bookings set agent_id = v_proposal.proposer_agent_id
         where id = (select b.id from bookings b
                      where b.agent_id = v_proposal.target_agent_id and b.status = 'confirmed'
                        and b.starts_at = v_proposal.starts_at and b.ends_at = v_proposal.ends_at
                      limit 1)
        returning * into v_booking;
        if found then
          update booking_slots set agent_id = v_proposal.proposer_agent_id where booking_id = v_booking.id;
          select * into v_created from record_booking_event(v_proposal.proposer_agent_id, 'booking.created', booking_item(v_booking), p_at);
          select * into v_transferred from record_booking_event(v_proposal.target_agent_id, 'booking.transferred', booking_item(v_booking), p_at);
          v_events := jsonb_build_array(
            jsonb_build_object('eventId', v_created.event_id::text, 'previousEventId', v_created.previous_event_id::text,
                               'agentId', v_proposal.proposer_agent_id, 'type', 'booking.created'),
            jsonb_build_object('eventId', v_transferred.event_id::text, 'previousEventId', v_transferred.previous_event_id::text,
                               'agentId', v_proposal.target_agent_id, 'type', 'booking.transferred'));
          v_deliveries := v_created.deliveries + v_transferred.deliveries;
        else
          insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at)
          values (gen_random_uuid(), v_proposal.proposer_agent_id, v_proposal.starts_at, v_proposal.ends_at, 'confirmed', null, '[]'::jsonb, p_at)
          returning * into v_booking;
          insert into booking_slots (booking_id, agent_id, starts_at, ends_at)
          values (v_booking.id, v_booking.agent_id, v_booking.starts_at, v_booking.ends_at);
          select * into v_created from record_booking_event(v_proposal.proposer_agent_id, 'booking.created', booking_item(v_booking), p_at);
          v_events := jsonb_build_array(
            jsonb_build_object('eventId', v_created.event_id::text, 'previousEventId', v_created.previous_event_id::text,
                               'agentId', v_proposal.proposer_agent_id, 'type', 'booking.created'));
          v_deliveries := v_created.deliveries;
        end if;
        update proposals set booking_id = v_booking.id where id = p_proposal returning * into v_proposal;
        return jsonb_build_object('proposal', to_jsonb(v_proposal), 'booking', booking_item(v_booking), 'events', v_events,
                                  'deliveries', v_deliveries);
      end
      $$;`);

    // The dispatcher's claim: due deliveries with everything needed to send them, leased until
    // p_lease_until so that no other process takes them meanwhile (a crash leaves them due again then).
    // At most p_per_webhook per endpoint, none for endpoints the caller already keeps busy: one slow
    // endpoint with a backlog cannot take every place. Candidates are bounded (the due index, in order).
    this.addSql(`
      create function claim_webhook_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit int, p_only uuid,
                                               p_in_flight uuid[], p_busy_webhooks uuid[], p_per_webhook int)
      returns table (id uuid, attempts int, webhook_id uuid, url text, secret text, webhook_disabled boolean,
                     event_id bigint, event_type text, event_created_at timestamptz, booking jsonb)
      language sql as $$
        with candidates as (
          select c.id, c.next_attempt_at, row_number() over (partition by c.webhook_id order by c.next_attempt_at, c.id) as place
            from (select d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
                   where d.status = 'pending' and d.next_attempt_at <= p_now and (p_only is null or d.id = p_only)
                     and d.id <> all (p_in_flight) and d.webhook_id <> all (p_busy_webhooks)
                   order by d.next_attempt_at
                   limit p_limit * 8) c
        ), due as (
          select d.id from webhook_deliveries d join candidates c on c.id = d.id
           where c.place <= p_per_webhook
           order by c.next_attempt_at
           limit p_limit
           for update of d skip locked
        ), leased as (
          update webhook_deliveries d set next_attempt_at = p_lease_until from due where d.id = due.id
          returning d.id, d.attempts, d.webhook_id, d.event_id
        )
        select l.id, l.attempts, w.id, w.url, w.secret, w.disabled_at is not null, e.id, e.type, e.created_at, e.booking
          from leased l join webhooks w on w.id = l.webhook_id join booking_events e on e.id = l.event_id;
      $$;`);

    // One attempt's outcome in one statement: the attempt row, the delivery, the endpoint's failure
    // count (and disabling it after p_disable_after failed deliveries in a row).
    this.addSql(`
      create function record_webhook_attempt(p_delivery uuid, p_attempt int, p_attempted_at timestamptz, p_status_code int,
                                             p_error text, p_duration_ms int, p_status text, p_next_attempt_at timestamptz,
                                             p_finished_at timestamptz, p_disable_after int)
      returns void language sql as $$
        with delivery as (
          -- Only the attempt this process claimed: a delivery deleted meanwhile (with its webhook) or
          -- attempted again after a lapsed lease records nothing, and fails nothing else in the batch.
          update webhook_deliveries
             set attempts = p_attempt, status = p_status, next_attempt_at = p_next_attempt_at, last_error = p_error,
                 delivered_at = case when p_status = 'delivered' then p_finished_at end
           where id = p_delivery and status = 'pending' and attempts = p_attempt - 1
          returning id, webhook_id
        ), attempt as (
          insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
          select delivery.id, p_attempt, p_attempted_at, p_status_code, p_error, p_duration_ms from delivery
        )
        update webhooks w
           set consecutive_failures = case p_status when 'delivered' then 0 when 'failed' then w.consecutive_failures + 1
                                      else w.consecutive_failures end,
               disabled_at = case when p_status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                                  then p_finished_at else w.disabled_at end,
               disabled_reason = case when p_status = 'failed' and w.disabled_at is null and w.consecutive_failures + 1 >= p_disable_after
                                      then (w.consecutive_failures + 1) || ' deliveries in a row failed; last error: ' || p_error
                                      else w.disabled_reason end
          from delivery
         where w.id = delivery.webhook_id;
      $$;`);

    // Many attempts' outcomes in one round trip, endpoint by endpoint (the same lock order in every
    // process, so two batches cannot deadlock), each endpoint's in the order they finished.
    this.addSql(`
      create function record_webhook_attempts(p_attempts jsonb, p_disable_after int) returns void language plpgsql as $$
      declare
        a record;
      begin
        for a in
          select * from jsonb_to_recordset(p_attempts) as x(delivery_id uuid, webhook_id uuid, attempt int, attempted_at timestamptz,
                                                           status_code int, error text, duration_ms int, status text,
                                                           next_attempt_at timestamptz, finished_at timestamptz)
           order by x.webhook_id, x.finished_at
        loop
          perform record_webhook_attempt(a.delivery_id, a.attempt, a.attempted_at, a.status_code, a.error, a.duration_ms,
                                         a.status, a.next_attempt_at, a.finished_at, p_disable_after);
        end loop;
      end
      $$;`);

    this.addSql(`create function agents_agents_credential_changed_fn() returns trigger language plpgsql as $$
begin${AGENT_CREDENTIAL_CHANGED_BODY}end;
$$;`);
    this.addSql(`create trigger agents_credential_changed after update or delete on agents for each row execute function agents_agents_credential_changed_fn();`);
  }
}
