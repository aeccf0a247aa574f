import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Records a batch of attempt outcomes, endpoint by endpoint in order of finishing.
 */
export const recordWebhookAttemptsFunction = sqlDefinition(
  'record_webhook_attempts',
  `
create or replace function record_webhook_attempts(p_attempts jsonb, p_disable_after int) returns void language plpgsql as $$
declare
  a record;
begin
  for a in
    select * from jsonb_to_recordset(p_attempts) as x(delivery_id uuid, webhook_id uuid, attempt int, attempted_at timestamptz,
                                                     status_code int, error text, duration_ms int, status text,
                                                     next_attempt_at timestamptz, finished_at timestamptz)
     order by x.webhook_id, x.finished_at
  loop
    perform record_webhook_attempt(a.delivery_id, a.attempt, a.attempted_at, a.status_code, a.error, a.duration_ms,
                                   a.status, a.next_attempt_at, a.finished_at, p_disable_after);
  end loop;
end
$$;
`,
);
