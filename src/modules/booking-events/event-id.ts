/**
 * An event's public id: the `webhook-id` of its deliveries and the `id` of its webhook body and of its
 * GraphQL `BookingEvent`, so a consumer of both recognises the same event. Built here only.
 */
export function publicEventId(cursor: string | number | bigint): string {
  return `evt_${cursor}`;
}
