import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Limits that are configuration (AGENT_FAMILY_MAX, PENDING_PROPOSALS_MAX) reach the triggers as
 * transaction-local settings the services set in the transaction of the write (fan-out-limits.ts);
 * a writer that sets none (psql, a seeding script) gets the contract's default.
 */
export const LIMIT_SETTINGS = {
  agentFamilyMax: { name: 'gateway.agent_family_max', contractDefault: 10_000 },
  pendingProposalsMax: { name: 'gateway.pending_proposals_max', contractDefault: 50 },
} as const;

/** `configured_limit('<setting>', <default>)` in a trigger's SQL. */
export const configuredLimit = (setting: { name: string; contractDefault: number }) => `configured_limit('${setting.name}', ${setting.contractDefault})`;

export const configuredLimitFunction = sqlDefinition(
  'configured_limit',
  `
create or replace function configured_limit(p_setting text, p_default int) returns int language sql stable as $$
  select coalesce(nullif(current_setting(p_setting, true), '')::int, p_default)
$$;
`,
);
