import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/** Every process caches credentials; a changed or removed agent tells them all to forget it (AGENT_CREDENTIALS_CHANNEL). */
export const agentCredentialChangedTrigger = sqlDefinition(
  'agent_credential_changed',
  `
create or replace function agent_credential_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('agent_credentials', old.token_hash);
  return null;
end;
$$;

create or replace trigger agents_credential_changed after update or delete on agents
  for each row execute function agent_credential_changed();
`,
);
