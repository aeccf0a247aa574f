import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The second half (see idempotency_lookup): records the first outcome of a key (`{"ok": …}` or `{"error": {code,
 * message}}`). A key recorded before `p_valid_after` counts as unused and is overwritten; a live one is kept.
 */
export const idempotencyRecordFunction = sqlDefinition(
  'idempotency_record',
  `
create or replace function idempotency_record(p_agent uuid, p_operation text, p_key text, p_request_hash text, p_outcome jsonb,
                                              p_at timestamptz, p_valid_after timestamptz)
returns void language sql as $$
  insert into idempotency_keys (agent_id, operation, key, request_hash, outcome, created_at)
  values (p_agent, p_operation, p_key, p_request_hash, p_outcome, p_at)
  on conflict (agent_id, operation, key) do update
    set request_hash = excluded.request_hash, outcome = excluded.outcome, created_at = excluded.created_at
    where idempotency_keys.created_at < p_valid_after;
$$;
`,
);
