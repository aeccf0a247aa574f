import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** The SQLSTATE a writer raises to refuse after it has begun to write, so that the whole statement rolls back. */
export const REFUSAL_SQLSTATE = 'SR001';

/**
 * Moves one of the owner's confirmed bookings in one transaction, under its agent's row lock, with optimistic
 * concurrency (`p_expected_version`, null: none) and the owner's rules for the new slots (booking_refusal: overlaps and
 * buffers for everyone, the other rules if it enforces them on itself; expired holds in the way then purged), recording one booking.rescheduled event with
 * the range before the move (`previous`). The caller (booking.service.ts) planned the slots:
 *
 * - `series` (a single booking, or a whole series): the booking keeps its id and takes the new range, rule and
 *   EXDATEs (booking_move), its own old slots left out of the admission;
 * - `occurrence`: the occurrence starting at `p_occurrence` leaves the series (an EXDATE) and becomes a single booking
 *   of its own with the new range;
 * - `following`: the series keeps its occurrences before `p_occurrence` (`p_kept_rrule`, `p_kept_exdates`), and a new
 *   series with the new range and the rest of the rule takes the others.
 *
 * Answers `{booking, previous, events}` (the moved booking, or the new one), or why nothing was written; a refusal
 * after the series was changed raises REFUSAL_SQLSTATE with the reason as its detail, which undoes the change.
 */
export const rescheduleBookingFunction = sqlDefinition(
  'reschedule_booking',
  `
create or replace function reschedule_booking(p_actor uuid, p_booking uuid, p_expected_version int, p_scope text, p_occurrence timestamptz,
                                              p_starts timestamptz, p_ends timestamptz, p_rrule text, p_exdates jsonb, p_slots jsonb,
                                              p_kept_rrule text, p_kept_exdates jsonb, p_at timestamptz)
returns jsonb language plpgsql as $$
declare
  v_agent uuid;
  v_old bookings;
  v_booking bookings;
  v_ranges tstzrange[] := array(select tstzrange(s.starts_at, s.ends_at, '[)') from jsonb_to_recordset(p_slots) as s(starts_at timestamptz, ends_at timestamptz));
  v_refusal jsonb;
  v_previous jsonb;
begin
  select agent_id into v_agent from bookings where id = p_booking;
  if not found then return '{"missing": true}'::jsonb; end if;
  perform 1 from agents where id = v_agent for no key update;
  select * into v_old from bookings where id = p_booking;
  if v_old.agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  if v_old.status <> 'confirmed' then return jsonb_build_object('notConfirmed', v_old.status); end if;
  if p_expected_version is not null and v_old.version <> p_expected_version then
    return jsonb_build_object('versionMismatch', v_old.version);
  end if;

  if p_scope = 'series' then
    v_refusal := booking_refusal(p_actor, v_agent, v_ranges, p_at, p_booking);
    if v_refusal is not null then return jsonb_build_object('refused', v_refusal); end if;
    perform booking_purge_expired_holds(v_agent, v_ranges, p_at);
    v_booking := booking_move(p_booking, p_starts, p_ends, p_rrule, p_exdates, p_slots);
    v_previous := jsonb_build_object('bookingId', p_booking, 'startsAt', iso_instant(v_old.starts_at), 'endsAt', iso_instant(v_old.ends_at),
                                     'version', v_old.version);
  else
    if p_scope = 'occurrence' then
      perform booking_exclude_occurrences(p_booking, array[p_occurrence]);
    else
      perform booking_move(p_booking, v_old.starts_at, v_old.ends_at, p_kept_rrule, p_kept_exdates,
                           (select coalesce(jsonb_agg(jsonb_build_object('starts_at', s.starts_at, 'ends_at', s.ends_at) order by s.starts_at), '[]'::jsonb)
                              from booking_slots s where s.booking_id = p_booking and s.starts_at < p_occurrence));
    end if;
    v_refusal := booking_refusal(p_actor, v_agent, v_ranges, p_at, null);
    if v_refusal is not null then
      raise exception using errcode = '${REFUSAL_SQLSTATE}', message = 'the new range is refused', detail = v_refusal::text;
    end if;
    perform booking_purge_expired_holds(v_agent, v_ranges, p_at);
    v_booking := booking_insert(gen_random_uuid(), v_agent, p_starts, p_ends, p_rrule, p_exdates, p_at, p_slots, null);
    v_previous := jsonb_build_object('bookingId', p_booking, 'startsAt', iso_instant(p_occurrence),
                                     'endsAt', iso_instant(p_occurrence + (v_old.ends_at - v_old.starts_at)), 'version', v_old.version);
  end if;
  return jsonb_build_object('booking', booking_item(v_booking), 'previous', v_previous,
                            'events', jsonb_build_array(record_booking_event(v_agent, 'booking.rescheduled', v_booking, p_at, v_previous)));
end
$$;
`,
);
