import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Occurrences leave a series: EXDATEs (stored as JavaScript's toISOString writes them: UTC, milliseconds), their
 * slots freed, `live_until` recomputed. A writer (see booking_insert).
 */
export const bookingExcludeOccurrencesFunction = sqlDefinition(
  'booking_exclude_occurrences',
  `
create or replace function booking_exclude_occurrences(p_booking uuid, p_starts_at timestamptz[]) returns bookings language plpgsql as $$
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
$$;
`,
);
