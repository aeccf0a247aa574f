import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * Whether an endpoint gets a delivery of an event: it takes the event's type, was registered by the time the
 * event happened and was not disabled before it (one disabled since gets its delivery, which fails as
 * disabled). The claim expands queued events by it, and the record checks by it that an event has every
 * delivery before it leaves the queue. Callers join on the agent first.
 */
export const webhookTakesEventFunction = sqlDefinition(
  'webhook_takes_event',
  `
create or replace function webhook_takes_event(p_webhook webhooks, p_event booking_events) returns boolean
language sql stable parallel safe as $$
  select p_event.type = any (p_webhook.events) and p_webhook.created_at <= p_event.created_at
         and (p_webhook.disabled_at is null or p_webhook.disabled_at > p_event.created_at)
$$;
`,
);
