import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Releases a hold (live or expired): its held bookings go at once, under the row locks of its calendars. Releasing a
 * released hold answers it as it is; a confirmed hold is not released (`{"confirmed": true}`: cancel its bookings).
 */
export const holdReleaseFunction = sqlDefinition(
  'hold_release',
  `
create or replace function hold_release(p_actor uuid, p_hold uuid, p_at timestamptz) returns jsonb language plpgsql as $$
declare
  v_hold holds;
begin
  select * into v_hold from holds where id = p_hold;
  if not found then return '{"missing": true}'::jsonb; end if;
  if v_hold.holder_agent_id <> p_actor then return '{"forbidden": true}'::jsonb; end if;
  perform 1 from agents where id = any(v_hold.agent_ids || v_hold.holder_agent_id) order by id for no key update;
  select * into v_hold from holds where id = p_hold;
  if v_hold.confirmed_at is not null then return '{"confirmed": true}'::jsonb; end if;
  if v_hold.released_at is null then
    update holds set released_at = p_at where id = p_hold;
    perform booking_delete_held(p_hold);
  end if;
  return jsonb_build_object('hold', hold_item(p_hold, p_at));
end
$$;
`,
);
