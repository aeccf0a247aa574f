import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Whether a slot blocks at `p_at`: a booking's slot always, a held one while its hold is live (not expired, confirmed
 * or released). An expired hold's slot may still be in the table until a writer in its way (or the sweep) purges
 * it, and blocks nothing meanwhile: every reader asks this. PostgreSQL does not inline it (its sub-select), so a call
 * costs a function call (about 8 µs here) and readers ask it only for held slots (`hold_id is null or …`).
 */
export const slotIsLiveFunction = sqlDefinition(
  'slot_is_live',
  `
create or replace function slot_is_live(p_hold uuid, p_at timestamptz) returns boolean language sql stable as $$
  select p_hold is null
      or exists (select 1 from holds h where h.id = p_hold and h.expires_at > p_at and h.confirmed_at is null and h.released_at is null);
$$;
`,
);
