import { namedStatement } from '../../../platform/db/statements.js';

export interface RulesRow {
  agent_id: string;
  time_zone: string;
  /** Seven multiranges as text (`{[540,720)}`), Monday first; null: no weekly hours. */
  weekly_hours: string[] | null;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  minimum_notice_minutes: number;
  maximum_advance_days: number | null;
  daily_limit: number | null;
  weekly_limit: number | null;
  enforce_on_own_bookings: boolean;
  updated_at: string;
  overrides: { on_date: string; hours: string }[] | null;
}

/** An agent's rules with their date overrides (by date), in one round trip; no row: no rules. */
export const RULES_OF = namedStatement<[agentId: string], RulesRow>(
  'availability_rules_of',
  `select r.agent_id, r.time_zone, r.weekly_hours::text[] as weekly_hours, r.buffer_before_minutes, r.buffer_after_minutes,
          r.minimum_notice_minutes, r.maximum_advance_days, r.daily_limit, r.weekly_limit, r.enforce_on_own_bookings,
          iso_instant(r.updated_at) as updated_at,
          (select jsonb_agg(jsonb_build_object('on_date', o.on_date::text, 'hours', o.hours::text) order by o.on_date)
             from availability_overrides o where o.agent_id = r.agent_id) as overrides
     from availability_rules r where r.agent_id = $1::uuid`,
);

/** Who an agent is to its settings' access rule. */
export const AGENT_PARENT = namedStatement<[agentId: string], { id: string; parent_id: string | null }>(
  'agent_parent',
  'select id, parent_id from agents where id = $1::uuid',
);

/**
 * An agent's working time inside a window, as instants, by `agent_working_ranges` (the definition every writer uses);
 * no row: the agent has no rules (all of its time is working time).
 */
export const WORKING_TIME_OF = namedStatement<[agentId: string, from: Date, to: Date], { ranges: { startsAt: string; endsAt: string }[] }>(
  'working_time_of',
  `select (select coalesce(jsonb_agg(jsonb_build_object('startsAt', iso_instant(lower(w)), 'endsAt', iso_instant(upper(w))) order by lower(w)), '[]'::jsonb)
             from unnest(agent_working_ranges(r, $2::timestamptz, $3::timestamptz)) as w) as ranges
     from availability_rules r where r.agent_id = $1::uuid`,
);
