import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * What every calendar writer asks, under the agent's row lock, before it writes `p_slots` on `p_agent`'s calendar
 * for `p_caller`: for an agent with rules, the first reason slot_refusals gives (null: admitted). An agent without
 * rules has nothing to refuse but overlaps, which the exclusion constraint refuses as it always has (`slot_taken`):
 * its writes cost what they did before rules existed. A slot that slot_admitted finds clear of every rule needs no
 * more (a single create's usual case: a few index probes instead of slot_refusals' whole evaluation). Reads only: a
 * writer that spans several calendars asks for all of them before it writes anything (then
 * booking_purge_expired_holds, then its inserts).
 */
export const bookingRefusalFunction = sqlDefinition(
  'booking_refusal',
  `
create or replace function booking_refusal(p_caller uuid, p_agent uuid, p_slots tstzrange[], p_at timestamptz, p_ignore uuid)
returns jsonb language plpgsql stable as $$
declare
  r availability_rules;
begin
  select * into r from availability_rules where agent_id = p_agent;
  if r.agent_id is null or slot_admitted(p_caller, r, p_slots, p_at, p_ignore) then return null; end if;
  return slot_refusals(p_caller, p_agent, p_slots, p_at, p_ignore, 1) -> 0;
end
$$;
`,
);
