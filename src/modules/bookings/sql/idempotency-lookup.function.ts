import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The first half of idempotency, for every idempotent write (create_booking's SQL, the proposal services through
 * idempotency.ts): a key of this agent and operation recorded at or after `p_valid_after` answers
 * `{"replay": <outcome>}`, or `{"conflict": true}` when it came with another request; null when the key is unused.
 * The caller holds the agent's row lock, which serialises its writes.
 */
export const idempotencyLookupFunction = sqlDefinition(
  'idempotency_lookup',
  `
create or replace function idempotency_lookup(p_agent uuid, p_operation text, p_key text, p_request_hash text, p_valid_after timestamptz)
returns jsonb language sql stable as $$
  select case when k.request_hash <> p_request_hash then '{"conflict": true}'::jsonb else jsonb_build_object('replay', k.outcome) end
    from idempotency_keys k
   where k.agent_id = p_agent and k.operation = p_operation and k.key = p_key and k.created_at >= p_valid_after;
$$;
`,
);
