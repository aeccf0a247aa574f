import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * What every calendar writer asks, under the agent's row lock, before it writes `p_slots` on `p_agent`'s calendar
 * for `p_caller`: for an agent with rules, the first reason slot_refusals gives (null: admitted). An agent without
 * rules has nothing to refuse but overlaps, which the exclusion constraint refuses as it always has (`slot_taken`):
 * its writes cost what they did before rules existed. Reads only: a writer that spans several calendars asks for
 * all of them before it writes anything (then booking_purge_expired_holds, then its inserts).
 */
export const bookingRefusalFunction = sqlDefinition(
  'booking_refusal',
  `
create or replace function booking_refusal(p_caller uuid, p_agent uuid, p_slots tstzrange[], p_at timestamptz, p_ignore uuid)
returns jsonb language sql stable as $$
  select slot_refusals(p_caller, p_agent, p_slots, p_at, p_ignore, 1) -> 0
   where exists (select 1 from availability_rules r where r.agent_id = p_agent);
$$;
`,
);
