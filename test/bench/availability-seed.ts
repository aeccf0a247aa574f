import type pg from 'pg';

/** What `seedAvailabilityBookings` writes for each agent. */
export interface AvailabilityCalendar {
  agentIds: readonly string[];
  from: Date | string;
  to: Date | string;
  perAgent: number;
  /** Each booking's length. */
  minutes: number;
  /** How far each slot blocks before and after its booking, as booking_insert writes an agent's buffers. */
  bufferBefore: number;
  bufferAfter: number;
}

/**
 * The calendars S8 and S13 ask about (and test/measure/availability-rules.ts times): `perAgent` bookings spread
 * evenly over [from, to), each start moved by 0 to 65 minutes (a hash of agent and index, so every run seeds the same
 * calendars) and snapped to 5 minutes, with their slots, in one statement.
 */
export async function seedAvailabilityBookings(db: pg.Pool | pg.Client, calendar: AvailabilityCalendar): Promise<void> {
  await db.query(
    `with b as (
       insert into bookings (id, agent_id, starts_at, ends_at, status, rrule, exdates, created_at, live_until)
       select gen_random_uuid(), a.id, s.at, s.at + make_interval(mins => $5), 'confirmed', null, '[]', now(), s.at + make_interval(mins => $5)
         from unnest($1::uuid[]) with ordinality as a(id, n)
        cross join lateral (
          select date_bin('5 minutes', $2::timestamptz + i * ($3::timestamptz - $2::timestamptz) / $4
                                       + (abs(hashtext(a.n || ':' || i)) % 14) * interval '5 minutes', timestamptz '2000-01-01') as at
            from generate_series(0, $4 - 1) i
        ) s
       returning id, agent_id, starts_at, ends_at)
     insert into booking_slots (booking_id, agent_id, starts_at, ends_at, blocked_from, blocked_until)
     select id, agent_id, starts_at, ends_at, starts_at - make_interval(mins => $6), ends_at + make_interval(mins => $7) from b`,
    [calendar.agentIds, calendar.from, calendar.to, calendar.perAgent, calendar.minutes, calendar.bufferBefore, calendar.bufferAfter],
  );
}
