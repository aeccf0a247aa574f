import { sqlDefinition } from '../../../platform/db/sql-definitions.js';

/**
 * A booking in the seed's BookingItem shape, as events carry it (`data.booking`).
 */
export const bookingItemFunction = sqlDefinition(
  'booking_item',
  `
create or replace function booking_item(b bookings) returns jsonb language sql stable as $$
  select jsonb_build_object(
    'id', b.id, 'agentId', b.agent_id,
    'startsAt', to_char(b.starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'endsAt', to_char(b.ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'status', b.status, 'rrule', b.rrule,
    'warningSentAt', to_char(b.warning_sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'createdAt', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
$$;
`,
);
