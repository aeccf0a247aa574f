import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Expired holds never block: every writer calls this right before it inserts, under the agent's row lock, for the
 * slots it is about to write, and the held bookings of expired holds whose blocked range overlaps them widened by the
 * agent's buffers (what the exclusion constraint will compare) go, with their slots. No sweeper is needed for
 * correctness. A writer (see booking_insert).
 *
 * Planned once per connection (plan_cache_mode): with the ranges as parameters PostgreSQL estimates 10 of them
 * where a writer hands one or a few, prices the generic plan above a custom one and so planned the delete afresh
 * on every call, 0.3 ms of a create's 1.6 ms of database time, for the same plan (a GiST probe per range on
 * booking_slots_no_overlap, then the holds by key). An agent without held slots (`booking_slots_held_idx`) is
 * answered before any of that.
 */
export const bookingPurgeExpiredHoldsFunction = sqlDefinition(
  'booking_purge_expired_holds',
  `
create or replace function booking_purge_expired_holds(p_agent uuid, p_slots tstzrange[], p_at timestamptz) returns int
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
declare
  v_before interval := interval '0';
  v_after interval := interval '0';
  v_purged int;
begin
  -- Most agents hold nothing: their held slots, none, answer before the buffers and the probe of every slot.
  perform 1 from booking_slots s where s.agent_id = p_agent and s.hold_id is not null limit 1;
  if not found then
    return 0;
  end if;
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
