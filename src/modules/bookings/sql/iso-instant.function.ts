import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** The one SQL writer of an instant, as the API writes every one: UTC ISO with milliseconds, what `toISOString` and booking_item() write. */
export const isoInstantFunction = sqlDefinition(
  'iso_instant',
  `
create or replace function iso_instant(p_at timestamptz) returns text language sql stable as $$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
$$;
`,
);
