import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * One agent's working time inside [p_from, p_to) as a multirange of instants: common_working_ranges for its rules alone
 * (what slot_refusals checks a writer's slots against).
 *
 * Always the generic plan: with its parameters known PostgreSQL estimates each custom plan cheaper than the generic
 * one and so planned the body afresh on every call (0.3 ms, more than evaluating it).
 */
export const agentWorkingRangesFunction = sqlDefinition(
  'agent_working_ranges',
  `
create or replace function agent_working_ranges(p_rules availability_rules, p_from timestamptz, p_to timestamptz)
returns tstzmultirange language sql stable set plan_cache_mode = force_generic_plan as $$
  select w.ranges from common_working_ranges(array[p_rules], p_from, p_to) as w;
$$;
`,
);
