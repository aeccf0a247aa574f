import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * The id of an event's delivery to one endpoint (a name-based UUID, version 8): the same whichever process
 * claims the event, and however often, so that an event claimed again after its process died is sent only to
 * the endpoints that have no delivery of it yet. A redelivery is a delivery of its own, with a random id.
 */
export const webhookDeliveryIdFunction = sqlDefinition(
  'webhook_delivery_id',
  `
create or replace function webhook_delivery_id(p_event_id bigint, p_webhook_id uuid) returns uuid
language sql immutable parallel safe as $$
  select overlay(overlay(md5(p_event_id::text || '/' || p_webhook_id::text) placing '8' from 13)
                 placing substr('89ab', get_byte(decode('0' || substr(md5(p_event_id::text || '/' || p_webhook_id::text), 17, 1), 'hex'), 0) % 4 + 1, 1)
                 from 17)::uuid
$$;
`,
);
