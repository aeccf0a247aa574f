import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A hold as every transport answers it (holds/hold.view.ts names the same fields): its status at `p_at` (`held`
 * while live, `confirmed`, `released`, or `expired`) and, per calendar it spans, the booking held there (null once
 * released or purged after expiry; a confirmed hold's bookings keep their ids).
 */
export const holdItemFunction = sqlDefinition(
  'hold_item',
  `
create or replace function hold_item(p_hold uuid, p_at timestamptz) returns jsonb language sql stable as $$
  select jsonb_build_object(
           'id', h.id, 'holderAgentId', h.holder_agent_id,
           'startsAt', iso_instant(h.starts_at), 'endsAt', iso_instant(h.ends_at),
           'expiresAt', iso_instant(h.expires_at), 'createdAt', iso_instant(h.created_at),
           'status', case when h.confirmed_at is not null then 'confirmed' when h.released_at is not null then 'released'
                          when h.expires_at <= p_at then 'expired' else 'held' end,
           'calendars', (select jsonb_agg(jsonb_build_object('agentId', calendar.agent_id,
                                                             'bookingId', (select b.id from bookings b where b.hold_id = h.id and b.agent_id = calendar.agent_id))
                                          order by calendar.agent_id)
                           from unnest(h.agent_ids) as calendar(agent_id)))
    from holds h where h.id = p_hold;
$$;
`,
);
