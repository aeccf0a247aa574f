import { Directive, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { DeliveryView, WebhookView } from '../webhook.service.js';
import { listSize } from '../../../platform/graphql/directives.js';

/** The most attempts a delivery can have: WEBHOOK_MAX_ATTEMPTS is at most 100 (config.ts). */
const WEBHOOK_ATTEMPTS_MAX = 100;

export enum DeliveryStatusFilter {
  pending = 'pending',
  delivered = 'delivered',
  failed = 'failed',
}
registerEnumType(DeliveryStatusFilter, { name: 'WebhookDeliveryStatus' });

@ObjectType('Webhook', { simpleResolvers: true, description: 'An endpoint receiving booking events, signed per the Standard Webhooks spec.' })
export class WebhookNode {
  @Field(() => ID)
  id!: string;

  @Field()
  url!: string;

  @Field(() => [String], { description: 'booking.created, booking.cancelled, booking.transferred, booking.reminder' })
  events!: string[];

  @Field()
  createdAt!: Date;

  @Field({ description: 'False once the endpoint kept failing; enableWebhook turns it back on.' })
  enabled!: boolean;

  @Field(() => Date, { nullable: true })
  disabledAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the endpoint was disabled.' })
  disabledReason!: string | null;

  @Field(() => Int)
  consecutiveFailures!: number;

  static from(view: WebhookView): WebhookNode {
    return Object.assign(new WebhookNode(), { ...view, enabled: view.disabledAt === null });
  }
}

@ObjectType({ simpleResolvers: true })
export class RegisteredWebhook {
  @Field(() => WebhookNode)
  webhook!: WebhookNode;

  @Field({ description: '`whsec_<base64>`: the HMAC-SHA256 key is the decoded part. Shown only here.' })
  secret!: string;
}

@ObjectType('WebhookAttempt', { simpleResolvers: true })
export class WebhookAttemptNode {
  @Field(() => Int)
  attempt!: number;

  @Field()
  attemptedAt!: Date;

  @Field(() => Int, { nullable: true })
  statusCode!: number | null;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => Int)
  durationMs!: number;
}

@ObjectType('WebhookDelivery', { simpleResolvers: true })
export class WebhookDeliveryNode {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  webhookId!: string;

  @Field({ description: 'The event cursor (shared with bookingEvents).' })
  eventCursor!: string;

  @Field()
  eventType!: string;

  @Field(() => DeliveryStatusFilter)
  status!: string;

  @Directive(listSize({ assumedSize: WEBHOOK_ATTEMPTS_MAX }))
  @Field(() => [WebhookAttemptNode])
  attempts!: WebhookAttemptNode[];

  @Field(() => Date, { nullable: true })
  nextAttemptAt!: Date | null;

  @Field(() => Date, { nullable: true })
  deliveredAt!: Date | null;

  @Field(() => String, { nullable: true })
  lastError!: string | null;

  @Field()
  createdAt!: Date;

  static from(view: DeliveryView): WebhookDeliveryNode {
    return Object.assign(new WebhookDeliveryNode(), view);
  }
}

@InputType()
export class RegisterWebhookInput {
  @Field({ description: 'http(s) URL; loopback and private addresses are refused unless WEBHOOK_ALLOW_PRIVATE.' })
  url!: string;

  @Field(() => [String], { nullable: true, description: 'Omitted: all events.' })
  events?: string[] | null;
}
