import { namedStatement } from '../../../platform/db/statements.js';
import type { BookingItem, PreviousRange } from '../../bookings/index.js';
import type { DeliveryStatus } from '../entities/webhook.entity.js';

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  webhook_id: string;
  url: string;
  secret: string;
  webhook_disabled: boolean;
  event_id: string;
  event_type: string;
  event_created_at: string;
  booking: BookingItem;
  /** booking.rescheduled: the range before the move. */
  previous: PreviousRange | null;
  /** The endpoint's previous event (`webhook-previous-cursor`); null for its first. */
  previous_event_id: string | null;
  /** A queued event's delivery, written with the outcome of this (its first) attempt. */
  queued: boolean;
}

/**
 * Due deliveries and queued events' deliveries, leased to this process, with the endpoint and the event in
 * the same round trip (`claim_webhook_deliveries`). `only` claims one waiting delivery if it is due;
 * deliveries this process still has in flight (a lease that ran out under load) are never claimed twice.
 */
export const CLAIM_DELIVERIES = namedStatement<
  [now: Date, leaseUntil: Date, limit: number, only: string | null, inFlight: string[], busyWebhooks: string[], perWebhook: number],
  ClaimedDelivery
>(
  'claim_webhook_deliveries',
  `select id, attempts, webhook_id, url, secret, webhook_disabled, event_id::text, event_type, event_created_at, booking, previous,
          previous_event_id::text, queued
     from claim_webhook_deliveries($1, $2, $3, $4::uuid, $5::uuid[], $6::uuid[], $7::int)`,
);

/** One attempt's outcome, as `record_webhook_attempts` reads it. */
export interface AttemptOutcome {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  /** A delivery written by this outcome is as old as its event. */
  event_created_at: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  finished_at: Date;
  /** The last of a queued event's deliveries this process claimed: the event may leave the queue. */
  completes_event: boolean;
}

/** Attempts' outcomes (attempt rows, deliveries, the endpoints' failure counts), many per round trip. */
export const RECORD_ATTEMPTS = namedStatement<[outcomes: string, disableAfter: number], Record<string, never>>(
  'record_webhook_attempts',
  'select from record_webhook_attempts($1::jsonb, $2::int)',
);
