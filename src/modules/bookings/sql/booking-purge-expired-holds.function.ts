import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Expired holds never block: every writer calls this right before it inserts, under the agent's row lock, for the
 * slots it is about to write, and the held bookings of expired holds whose blocked range overlaps them widened by the
 * agent's buffers (what the exclusion constraint will compare) go, with their slots. No sweeper is needed for
 * correctness. A writer (see booking_insert).
 *
 * Always the generic plan: PostgreSQL estimates `unnest(p_slots)` at ten rows in it and one in a custom plan, so it
 * planned the delete afresh on every create (0.3 ms, where running it costs 0.05).
 */
export const bookingPurgeExpiredHoldsFunction = sqlDefinition(
  'booking_purge_expired_holds',
  `
create or replace function booking_purge_expired_holds(p_agent uuid, p_slots tstzrange[], p_at timestamptz) returns int
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_before interval := interval '0';
  v_after interval := interval '0';
  v_purged int;
begin
  select make_interval(mins => r.buffer_before_minutes), make_interval(mins => r.buffer_after_minutes)
    into v_before, v_after from availability_rules r where r.agent_id = p_agent;
  delete from bookings b
   where b.id in (select s.booking_id from unnest(p_slots) as slot(r)
                    join booking_slots s on s.agent_id = p_agent
                                        and tstzrange(s.blocked_from, s.blocked_until, '[)')
                                            && tstzrange(lower(slot.r) - coalesce(v_before, interval '0'), upper(slot.r) + coalesce(v_after, interval '0'), '[)')
                    join holds h on h.id = s.hold_id
                   where s.hold_id is not null and h.expires_at <= p_at)
     and b.status = 'held';
  get diagnostics v_purged = row_count;
  return v_purged;
end
$$;
`,
);
