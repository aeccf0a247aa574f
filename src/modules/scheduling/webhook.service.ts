import { randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { isUuid } from './input-checks.js';
import { enqueueJob } from '../../platform/jobs/queue.js';
import type { Logger } from '../../platform/logger.js';
import { guardedDispatcher, refusedTarget } from '../../platform/net/address-policy.js';
import type { AgentRecord } from './agent.service.js';
import { BOOKING_EVENT_TYPES, type BookingEventType } from './entities/booking-event.entity.js';
import { Webhook, WebhookAttempt, WebhookDelivery, type DeliveryStatus } from './entities/webhook.entity.js';

export const DELIVER_WEBHOOK_TASK = 'deliver_webhook';

export interface WebhookSettings {
  retryBaseMs: number;
  maxAttempts: number;
  allowPrivate: boolean;
  /** A receiver that has not answered by then is cut off (the attempt fails). */
  timeoutMs: number;
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  disableAfterFailures: number;
}

export interface WebhookView {
  id: string;
  url: string;
  events: BookingEventType[];
  createdAt: Date;
  disabledAt: Date | null;
  disabledReason: string | null;
  consecutiveFailures: number;
}

export interface RegisteredWebhook extends WebhookView {
  /** `whsec_<base64>`, shown only at registration. */
  secret: string;
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  eventCursor: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: { attempt: number; attemptedAt: Date; statusCode: number | null; error: string | null; durationMs: number }[];
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  lastError: string | null;
  createdAt: Date;
}

const URL_MAX_LENGTH = 2048;

function toWebhookView(webhook: Webhook): WebhookView {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events as BookingEventType[],
    createdAt: webhook.createdAt,
    disabledAt: webhook.disabledAt,
    disabledReason: webhook.disabledReason,
    consecutiveFailures: webhook.consecutiveFailures,
  };
}

/**
 * Webhook endpoints of an agent and the delivery of its booking events to them: at least once,
 * from the outbox, signed per the Standard Webhooks spec, retried with exponential backoff.
 */
export class WebhookService {
  private readonly dispatcher: Dispatcher;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
  ) {
    this.dispatcher = guardedDispatcher(settings.allowPrivate);
  }

  async register(actor: AgentRecord, input: { url: string; events?: readonly string[] | undefined }): Promise<RegisteredWebhook> {
    const url = await this.checkUrl(input.url);
    const events = this.checkEvents(input.events);
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const webhook = this.em.create(Webhook, {
      agent: actor.id,
      url: url.toString(),
      events,
      secret,
      consecutiveFailures: 0,
      createdAt: this.clock.now(),
    });
    await this.em.flush();
    return { ...toWebhookView(webhook), secret };
  }

  async list(actor: AgentRecord): Promise<WebhookView[]> {
    const webhooks = await this.em.find(Webhook, { agent: actor.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return webhooks.map(toWebhookView);
  }

  async delete(actor: AgentRecord, webhookId: string): Promise<void> {
    const webhook = await this.findOwned(actor, webhookId);
    await this.em.remove(webhook).flush();
  }

  /** Turns a disabled endpoint back on; later events are delivered again. */
  async enable(actor: AgentRecord, webhookId: string): Promise<WebhookView> {
    const webhook = await this.findOwned(actor, webhookId);
    webhook.disabledAt = null;
    webhook.disabledReason = null;
    webhook.consecutiveFailures = 0;
    await this.em.flush();
    return toWebhookView(webhook);
  }

  async deliveries(
    actor: AgentRecord,
    filter: { webhookId?: string | undefined; status?: DeliveryStatus | undefined; deliveryId?: string; limit: number },
  ): Promise<DeliveryView[]> {
    if (filter.webhookId) await this.findOwned(actor, filter.webhookId);
    const deliveries = await this.em.find(
      WebhookDelivery,
      {
        webhook: filter.webhookId ? filter.webhookId : { agent: actor.id },
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.deliveryId ? { id: filter.deliveryId } : {}),
      },
      { populate: ['event'], orderBy: { createdAt: 'desc', id: 'desc' }, limit: filter.limit },
    );
    const attempts = deliveries.length
      ? await this.em.find(WebhookAttempt, { delivery: { $in: deliveries.map((d) => d.id) } }, { orderBy: { attempt: 'asc' } })
      : [];
    return deliveries.map((delivery) => ({
      id: delivery.id,
      webhookId: delivery.webhook.id,
      eventCursor: String(delivery.event.id),
      eventType: delivery.event.type,
      status: delivery.status,
      attempts: attempts
        .filter((attempt) => attempt.delivery.id === delivery.id)
        .map(({ attempt, attemptedAt, statusCode, error, durationMs }) => ({ attempt, attemptedAt, statusCode, error, durationMs })),
      nextAttemptAt: delivery.nextAttemptAt,
      deliveredAt: delivery.deliveredAt,
      lastError: delivery.lastError,
      createdAt: delivery.createdAt,
    }));
  }

  /** Sends the event of a delivery again, as a new delivery with its own attempts. */
  async redeliver(actor: AgentRecord, deliveryId: string): Promise<DeliveryView> {
    const original = isUuid(deliveryId) ? await this.em.findOne(WebhookDelivery, deliveryId, { populate: ['webhook'] }) : null;
    if (!original) throw new AppError('not_found', `no delivery ${deliveryId}`);
    if (original.webhook.agent.id !== actor.id) throw new AppError('forbidden', 'the delivery belongs to another agent');
    const copy = await this.em.transactional(async (tx) => {
      const delivery = tx.create(WebhookDelivery, {
        webhook: original.webhook.id,
        event: original.event.id,
        status: 'pending',
        attempts: 0,
        // Queued right here rather than by the relay: one delivery, and the caller waits anyway.
        queuedAt: this.clock.now(),
        createdAt: this.clock.now(),
      });
      await tx.flush();
      await enqueueJob(tx, DELIVER_WEBHOOK_TASK, { deliveryId: delivery.id }, { jobKey: `delivery:${delivery.id}` });
      return delivery;
    });
    const [view] = await this.deliveries(actor, { deliveryId: copy.id, limit: 1 });
    return view!;
  }

  /**
   * The `deliver_webhook` job: one attempt. Success marks the delivery delivered; a failure queues the
   * next attempt after `retryBaseMs · 2^(attempt-1)`, or marks it failed after the last one.
   */
  async attemptDelivery(deliveryId: string): Promise<void> {
    const delivery = await this.em.findOne(WebhookDelivery, deliveryId, { populate: ['webhook', 'event'] });
    if (!delivery || delivery.status !== 'pending') return;
    const { webhook, event } = delivery;
    const attempt = delivery.attempts + 1;
    const started = this.clock.now();

    let statusCode: number | null = null;
    let error: string | null = null;
    if (webhook.disabledAt) {
      error = 'the endpoint is disabled';
    } else {
      const result = await this.post(webhook, {
        id: `evt_${event.id}`,
        type: event.type,
        created_at: event.createdAt.toISOString(),
        data: { booking: event.booking },
      });
      statusCode = result.statusCode;
      error = result.error;
    }
    const succeeded = error === null;
    const finished = this.clock.now();
    const exhausted = !succeeded && (attempt >= this.settings.maxAttempts || webhook.disabledAt !== null);

    await this.em.transactional(async (tx) => {
      tx.create(WebhookAttempt, {
        delivery: delivery.id,
        attempt,
        attemptedAt: started,
        statusCode,
        error,
        durationMs: finished.getTime() - started.getTime(),
      });
      const current = await tx.findOneOrFail(WebhookDelivery, delivery.id, { populate: ['webhook'], lockMode: LockMode.PESSIMISTIC_WRITE });
      current.attempts = attempt;
      current.lastError = error;
      if (succeeded) {
        current.status = 'delivered';
        current.deliveredAt = finished;
        current.nextAttemptAt = null;
        current.webhook.consecutiveFailures = 0;
      } else if (exhausted) {
        current.status = 'failed';
        current.nextAttemptAt = null;
        current.webhook.consecutiveFailures += 1;
        if (!current.webhook.disabledAt && current.webhook.consecutiveFailures >= this.settings.disableAfterFailures) {
          current.webhook.disabledAt = finished;
          current.webhook.disabledReason = `${current.webhook.consecutiveFailures} deliveries in a row failed; last error: ${error}`;
        }
      } else {
        current.nextAttemptAt = new Date(finished.getTime() + this.settings.retryBaseMs * 2 ** (attempt - 1));
        await enqueueJob(tx, DELIVER_WEBHOOK_TASK, { deliveryId: delivery.id }, { runAt: current.nextAttemptAt, jobKey: `delivery:${delivery.id}` });
      }
      await tx.flush();
    });
  }

  private async post(webhook: Webhook, message: object): Promise<{ statusCode: number | null; error: string | null }> {
    const body = JSON.stringify(message);
    const id = (message as { id: string }).id;
    const timestamp = this.clock.now();
    const signature = new StandardWebhook(webhook.secret).sign(id, timestamp, body);
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const refused = await refusedTarget(new URL(webhook.url), this.settings.allowPrivate);
      if (refused) return { statusCode: null, error: `refused: the URL ${refused}` };
      const response = await request(webhook.url, {
        method: 'POST',
        dispatcher: this.dispatcher,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'agent-gateway-webhooks/1.0',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        signal: deadline,
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { statusCode: response.statusCode, error: ok ? null : `the receiver answered ${response.statusCode}` };
    } catch (error) {
      const reason = deadline.aborted ? `no answer within ${this.settings.timeoutMs} ms` : String((error as Error).message ?? error);
      this.logger.debug({ webhookId: webhook.id, err: error }, 'webhook attempt failed');
      return { statusCode: null, error: reason };
    }
  }

  private async checkUrl(raw: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw AppError.validation({ url: 'must be an absolute http or https URL' });
    }
    if (raw.length > URL_MAX_LENGTH) throw AppError.validation({ url: `must be at most ${URL_MAX_LENGTH} characters` });
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw AppError.validation({ url: 'must be an absolute http or https URL' });
    if (url.username || url.password) throw AppError.validation({ url: 'must not carry credentials' });
    const refused = await refusedTarget(url, this.settings.allowPrivate);
    if (refused) throw AppError.validation({ url: refused });
    return url;
  }

  private checkEvents(events: readonly string[] | undefined): BookingEventType[] {
    if (events === undefined) return [...BOOKING_EVENT_TYPES];
    if (events.length === 0) throw AppError.validation({ events: 'must list at least one event, or be omitted for all' });
    const unknown = events.find((event) => !(BOOKING_EVENT_TYPES as readonly string[]).includes(event));
    if (unknown) throw AppError.validation({ events: `${unknown} is not one of ${BOOKING_EVENT_TYPES.join(', ')}` });
    return [...new Set(events)] as BookingEventType[];
  }

  private async findOwned(actor: AgentRecord, webhookId: string): Promise<Webhook> {
    const webhook = isUuid(webhookId) ? await this.em.findOne(Webhook, webhookId) : null;
    if (!webhook) throw new AppError('not_found', `no webhook ${webhookId}`);
    if (webhook.agent.id !== actor.id) throw new AppError('forbidden', 'the webhook belongs to another agent');
    return webhook;
  }
}
