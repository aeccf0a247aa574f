import { randomUUID } from 'node:crypto';
import { ArrayType } from '@mikro-orm/core';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Agent } from '../../agents/index.js';
import { BookingEvent } from '../../booking-events/index.js';

/** An endpoint that receives an agent's booking events, signed per the Standard Webhooks spec. */
@Entity({ tableName: 'webhooks' })
@Index({ name: 'webhooks_agent_idx', properties: ['agent'] })
// At most MAX_WEBHOOKS_PER_AGENT per agent: a trigger holds it (sql/webhooks-per-agent-limit.trigger.ts).
export class Webhook {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Agent, { deleteRule: 'cascade' })
  agent!: Agent;

  @Property({ type: 'text' })
  url!: string;

  @Property({ type: ArrayType, columnType: 'text[]' })
  events!: string[];

  /** `whsec_<base64>`: the HMAC key is the decoded part. Needed in clear to sign. */
  @Property({ type: 'string', length: 64, hidden: true })
  secret!: string;

  @Property({ type: 'integer', default: 0 })
  consecutiveFailures = 0;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  disabledAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event on its way to one webhook; retried with exponential backoff until delivered or failed. */
@Entity({ tableName: 'webhook_deliveries' })
@Check({ name: 'webhook_deliveries_status_check', expression: `"status" in ('pending', 'delivered', 'failed')` })
@Index({ name: 'webhook_deliveries_webhook_idx', properties: ['webhook', 'createdAt'] })
// Deleting an old event (retention) deletes its deliveries through it, and keeps one still pending.
@Index({ name: 'webhook_deliveries_event_idx', properties: ['event'] })
// The dispatcher claims due pending deliveries over this index.
@Index({
  name: 'webhook_deliveries_due_idx',
  expression: "create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'",
})
export class WebhookDelivery {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Webhook, { deleteRule: 'cascade' })
  webhook!: Webhook;

  @ManyToOne(() => BookingEvent, { deleteRule: 'cascade' })
  event!: BookingEvent;

  @Property({ type: 'string', length: 16 })
  status!: DeliveryStatus;

  @Property({ type: 'integer', default: 0 })
  attempts = 0;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true })
  deliveredAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}

/** One HTTP attempt of a delivery, kept for the delivery log. */
@Entity({ tableName: 'webhook_attempts' })
@Index({ name: 'webhook_attempts_delivery_idx', properties: ['delivery', 'attempt'] })
export class WebhookAttempt {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => WebhookDelivery, { deleteRule: 'cascade' })
  delivery!: WebhookDelivery;

  @Property({ type: 'integer' })
  attempt!: number;

  @Property({ type: 'Date', columnType: 'timestamptz' })
  attemptedAt!: Date;

  @Property({ type: 'integer', nullable: true })
  statusCode: number | null = null;

  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Property({ type: 'integer' })
  durationMs!: number;
}
