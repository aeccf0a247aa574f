import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { retryTransient } from '../../platform/db/pg-errors.js';
import type { Statements } from '../../platform/db/statements.js';
import { toIsoString } from '../../platform/iso-time.js';
import { isUuid } from '../../platform/uuid.js';
import type { Logger } from '../../platform/logger.js';
import { guardedDispatcher, refusedTarget } from '../../platform/net/address-policy.js';
import { HostResolutionError, HostResolver } from '../../platform/net/host-resolver.js';
import type { Actor } from '../../platform/auth/actor.js';
import { agentOf, requireOwner, type AgentRecord } from '../agents/index.js';
import { BOOKING_EVENT_TYPES, publicEventId, type BookingEventType } from '../booking-events/index.js';
import { inSeedShape } from '../bookings/index.js';
import { Webhook, WebhookAttempt, WebhookDelivery, type DeliveryStatus } from './entities/webhook.entity.js';
import { CLAIM_DELIVERIES, RECORD_ATTEMPTS, type AttemptOutcome, type ClaimedDelivery } from './sql/webhook.sql.js';
import { WriteBatcher } from '../../platform/db/write-batcher.js';
import type { CounterSeries } from '../../platform/metrics/families.js';
import { RecentTotals } from '../../platform/metrics/recent-totals.js';
import { SCHEDULING_LIMITS } from '../../platform/api-limits.js';
import { echo } from '../../platform/echo.js';
import { HTTP_URL_WITHOUT_CREDENTIALS, isHttpUrl } from '../../platform/formats.js';

/**
 * Beside the Standard Webhooks headers, every delivery names its event's cursor (the `since` of the change
 * feed, the `after` of `bookingEvents`; the body's `id` is `evt_<cursor>`) and the cursor of the event this
 * endpoint was sent before it (absent for the endpoint's first). A receiver whose last cursor is not the
 * previous one missed something, and reads the change feed `since` its last cursor.
 */
export const WEBHOOK_CURSOR_HEADERS = { cursor: 'webhook-cursor', previousCursor: 'webhook-previous-cursor' } as const;

/** Delivery jobs queued before the dispatcher existed still run under this name. */
export const DELIVER_WEBHOOK_TASK = 'deliver_webhook';

/** One page of `webhookDeliveries`; each delivery carries at most `WEBHOOK_MAX_ATTEMPTS` attempts. */
export const DELIVERY_LIST_LIMITS = { default: SCHEDULING_LIMITS.pageDefault, max: SCHEDULING_LIMITS.pageMax } as const;

/** Attempts in flight to one endpoint per process: a slow endpoint with a backlog keeps the others' places free. */
const IN_FLIGHT_PER_WEBHOOK = 4;

/** How long past the receiver timeout a claimed delivery stays leased to the process that claimed it. */
const DELIVERY_LEASE_MARGIN_MS = 10_000;

/** How one delivery attempt ended: delivered, failed with a retry scheduled, or failed for good. */
export type WebhookAttemptOutcome = 'delivered' | 'retrying' | 'failed';
export const WEBHOOK_ATTEMPT_OUTCOMES: readonly WebhookAttemptOutcome[] = ['delivered', 'retrying', 'failed'];

/**
 * Why an attempt failed, in words that name no receiver: the status report is public, and an error
 * message would carry a customer's host and address.
 */
export type WebhookFailureKind = 'timeout' | 'connection_refused' | 'connection_failed' | 'invalid_response' | 'error_status' | 'address_refused' | 'endpoint_disabled';

/** What this process's webhook attempts met lately (status report). */
export interface WebhookHealth {
  attemptsLastFiveMinutes: Record<WebhookAttemptOutcome, number>;
  lastFailure: { at: Date; kind: WebhookFailureKind } | null;
}

const RECENT_WINDOW_SECONDS = 300;

export interface WebhookSettings {
  retryBaseMs: number;
  maxAttempts: number;
  allowPrivate: boolean;
  /** A receiver that has not answered by then is cut off (the attempt fails). */
  timeoutMs: number;
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  disableAfterFailures: number;
  /** Name servers for webhook host names; empty: the system's. */
  dnsServers: readonly string[];
  /** A webhook host name that has not resolved by then is treated as not resolving. */
  dnsTimeoutMs: number;
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

/** What a webhook's URL must be: http(s), RFC 3986, no credentials (then a public address, unless WEBHOOK_ALLOW_PRIVATE). */
export const WEBHOOK_URL = HTTP_URL_WITHOUT_CREDENTIALS;

export const WEBHOOK_LIMITS = {
  /** An endpoint URL, in the REST schema and the service's own check (GraphQL and MCP reach only that). */
  urlMaxLength: 2048,
  /** Event names in one registration (each at most once counts; a longer list only repeats them). */
  eventsMax: 10,
} as const;

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
  private readonly resolver: HostResolver;

  private deliveriesDue: () => void = () => undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly inFlightByWebhook = new Map<string, number>();
  /** Queued events claimed here, with how many of their deliveries have no outcome on its way yet. */
  private readonly queuedEventsLeft = new Map<string, number>();
  /** Aborted at shutdown: attempts in flight stop waiting for their receivers. */
  private readonly shutdown = new AbortController();
  private readonly recentAttempts = new RecentTotals<WebhookAttemptOutcome>(RECENT_WINDOW_SECONDS);
  private lastFailure: WebhookHealth['lastFailure'] = null;
  private readonly outcomes = new WriteBatcher<AttemptOutcome>(async (outcomes) => {
    await retryTransient(() => this.statements.rows(RECORD_ATTEMPTS, [JSON.stringify(outcomes), this.settings.disableAfterFailures]));
  });

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly statements: Statements,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
    private readonly attemptOutcomes: Readonly<Record<WebhookAttemptOutcome, CounterSeries>>,
  ) {
    this.resolver = new HostResolver({ servers: settings.dnsServers, timeoutMs: settings.dnsTimeoutMs });
    this.dispatcher = guardedDispatcher(settings.allowPrivate, this.resolver);
  }

  async register(caller: Actor, input: { url: string; events?: readonly string[] | undefined }): Promise<RegisteredWebhook> {
    const actor = agentOf(caller);
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
    // The trigger behind `webhooks_per_agent_limit` decides the bound, races included (constraint-errors.ts).
    await this.em.flush();
    return { ...toWebhookView(webhook), secret };
  }

  async list(caller: Actor): Promise<WebhookView[]> {
    const actor = agentOf(caller);
    const webhooks = await this.em.find(Webhook, { agent: actor.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return webhooks.map(toWebhookView);
  }

  async delete(caller: Actor, webhookId: string): Promise<void> {
    const actor = agentOf(caller);
    const webhook = await this.findOwned(actor, webhookId);
    await this.em.remove(webhook).flush();
  }

  /** Turns a disabled endpoint back on; later events are delivered again. */
  async enable(caller: Actor, webhookId: string): Promise<WebhookView> {
    const actor = agentOf(caller);
    const webhook = await this.findOwned(actor, webhookId);
    webhook.disabledAt = null;
    webhook.disabledReason = null;
    webhook.consecutiveFailures = 0;
    await this.em.flush();
    return toWebhookView(webhook);
  }

  /**
   * Turns an endpoint off by hand, as repeated failures do: later events get no delivery for it, and
   * deliveries still due end as failed. Disabling a disabled endpoint keeps its first reason.
   */
  async disable(caller: Actor, webhookId: string): Promise<WebhookView> {
    const actor = agentOf(caller);
    const webhook = await this.findOwned(actor, webhookId);
    if (!webhook.disabledAt) {
      webhook.disabledAt = this.clock.now();
      webhook.disabledReason = 'disabled by its agent';
      await this.em.flush();
    }
    return toWebhookView(webhook);
  }

  async deliveries(
    caller: Actor,
    filter: { webhookId?: string | undefined; status?: DeliveryStatus | undefined; deliveryId?: string; limit: number },
  ): Promise<DeliveryView[]> {
    const actor = agentOf(caller);
    if (filter.webhookId !== undefined) await this.findOwned(actor, filter.webhookId);
    const deliveries = await this.em.find(
      WebhookDelivery,
      {
        webhook: filter.webhookId !== undefined ? filter.webhookId : { agent: actor.id },
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
  async redeliver(caller: Actor, deliveryId: string): Promise<DeliveryView> {
    const actor = agentOf(caller);
    const original = isUuid(deliveryId) ? await this.em.findOne(WebhookDelivery, deliveryId, { populate: ['webhook'] }) : null;
    if (!original) throw new AppError('not_found', `no delivery ${echo(deliveryId)}`);
    requireOwner(actor, original.webhook.agent.id, 'delivery');
    const copy = await this.em.transactional(async (tx) => {
      const delivery = tx.create(WebhookDelivery, {
        webhook: original.webhook.id,
        event: original.event.id,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: this.clock.now(),
        createdAt: this.clock.now(),
      });
      await tx.flush();
      return delivery;
    });
    this.deliveriesDue();
    const [view] = await this.deliveries(caller, { deliveryId: copy.id, limit: 1 });
    return view!;
  }

  /** Who sends due deliveries (the dispatcher): told about new ones and about retries as they fall due. */
  onDeliveriesDue(kick: () => void): void {
    this.deliveriesDue = kick;
  }

  /**
   * One pass of the dispatcher: claims due deliveries and queued events (leased, so no other process
   * takes them) for the free places among `capacity` attempts in flight and starts them. A slow
   * receiver holds one place until its timeout, never the others. Answers whether it filled every
   * free place (more may be due); every finished attempt wakes the dispatcher again.
   */
  async deliverDue(capacity: number): Promise<boolean> {
    const free = capacity - this.inFlight.size;
    if (free <= 0) return false;
    const now = this.clock.now();
    const claimed = await this.claim(now, free, null);
    // All counted before any attempt starts: one can reach its outcome without waiting (a disabled endpoint).
    for (const delivery of claimed) {
      if (delivery.queued) this.queuedEventsLeft.set(delivery.event_id, (this.queuedEventsLeft.get(delivery.event_id) ?? 0) + 1);
    }
    for (const delivery of claimed) {
      const webhookId = delivery.webhook_id;
      this.inFlightByWebhook.set(webhookId, (this.inFlightByWebhook.get(webhookId) ?? 0) + 1);
      const attempt = this.attempt(delivery)
        .catch((error: unknown) => this.logger.warn({ err: error, deliveryId: delivery.id }, 'recording a webhook attempt failed; it is retried when its lease ends'))
        .finally(() => {
          this.inFlight.delete(delivery.id);
          const left = (this.inFlightByWebhook.get(webhookId) ?? 1) - 1;
          if (left > 0) this.inFlightByWebhook.set(webhookId, left);
          else this.inFlightByWebhook.delete(webhookId);
          this.deliveriesDue();
        });
      this.inFlight.set(delivery.id, attempt);
    }
    // A queued event may bring more than was asked for (all of its endpoints).
    return claimed.length >= free;
  }

  /** One attempt at one delivery if it is due (jobs queued before the dispatcher existed). */
  async deliverOne(deliveryId: string): Promise<void> {
    const now = this.clock.now();
    const [delivery] = await this.claim(now, 1, deliveryId);
    if (delivery) await this.attempt(delivery);
  }

  /**
   * Shutdown: cuts the attempts in flight short and waits for them. A cut attempt is not recorded:
   * its delivery stays leased and is due again when the lease ends, for whichever process is running.
   */
  async settle(): Promise<void> {
    this.shutdown.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * Success marks the delivery delivered; a failure makes it due again after
   * `retryBaseMs · 2^(attempt-1)`, or marks it failed after the last attempt.
   */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const progress = { counted: false };
    try {
      await this.attemptAndRecord(delivery, progress);
    } finally {
      // Cut short (shutdown) or failed before its outcome: it no longer holds its event back in this process,
      // and the event leaves the queue only once it has this delivery too (record_webhook_attempts checks).
      if (!progress.counted) this.completesEvent(delivery);
    }
  }

  /** Sets `progress.counted` once the outcome counts for its queued event (on its way to the recorder). */
  private async attemptAndRecord(delivery: ClaimedDelivery, progress: { counted: boolean }): Promise<void> {
    const attempt = delivery.attempts + 1;
    const started = this.clock.now();
    const { statusCode, error, failureKind } = delivery.webhook_disabled
      ? { statusCode: null, error: 'the endpoint is disabled', failureKind: 'endpoint_disabled' as const }
      : await this.post(delivery, {
          id: publicEventId(delivery.event_id),
          type: delivery.event_type,
          created_at: toIsoString(new Date(delivery.event_created_at)),
          data: delivery.previous ? { booking: inSeedShape(delivery.booking), previous: delivery.previous } : { booking: inSeedShape(delivery.booking) },
        });
    if (this.shutdown.signal.aborted) return;
    const finished = this.clock.now();
    const succeeded = error === null;
    const exhausted = !succeeded && (attempt >= this.settings.maxAttempts || delivery.webhook_disabled);
    const outcome = succeeded ? 'delivered' : exhausted ? 'failed' : 'retrying';
    this.attemptOutcomes[outcome].inc();
    this.recentAttempts.add(outcome);
    if (failureKind) this.lastFailure = { at: finished, kind: failureKind };
    const retryAt = succeeded || exhausted ? null : new Date(finished.getTime() + this.settings.retryBaseMs * 2 ** (attempt - 1));
    const completesEvent = this.completesEvent(delivery);
    progress.counted = true;
    await this.outcomes.add({
      delivery_id: delivery.id,
      webhook_id: delivery.webhook_id,
      event_id: delivery.event_id,
      event_created_at: delivery.event_created_at,
      attempt,
      attempted_at: started,
      status_code: statusCode,
      error,
      duration_ms: finished.getTime() - started.getTime(),
      status: succeeded ? 'delivered' : exhausted ? 'failed' : 'pending',
      next_attempt_at: retryAt,
      finished_at: finished,
      completes_event: completesEvent,
    });
    if (retryAt) setTimeout(() => this.deliveriesDue(), Math.max(0, retryAt.getTime() - finished.getTime())).unref();
  }

  /**
   * Counts a queued event's delivery as done here; true for the event's last one claimed here. A delivery
   * cut short (shutdown) or failed before its outcome counts without completing: the record's check keeps
   * its event queued, claimed again for it when the lease ends.
   */
  private completesEvent(delivery: ClaimedDelivery): boolean {
    if (!delivery.queued) return false;
    const left = (this.queuedEventsLeft.get(delivery.event_id) ?? 1) - 1;
    if (left > 0) {
      this.queuedEventsLeft.set(delivery.event_id, left);
      return false;
    }
    this.queuedEventsLeft.delete(delivery.event_id);
    return true;
  }

  private claim(now: Date, limit: number, only: string | null): Promise<ClaimedDelivery[]> {
    return this.statements.rows(CLAIM_DELIVERIES, [now, this.leaseUntil(now), limit, only, [...this.inFlight.keys()], this.busyWebhooks(), IN_FLIGHT_PER_WEBHOOK]);
  }

  /** Endpoints with every place of this process taken: their backlog is not claimable here now. */
  private busyWebhooks(): string[] {
    return [...this.inFlightByWebhook].filter(([, count]) => count >= IN_FLIGHT_PER_WEBHOOK).map(([webhookId]) => webhookId);
  }

  private leaseUntil(now: Date): Date {
    // Long enough for the attempt to finish; a process that dies meanwhile leaves it due again after.
    return new Date(now.getTime() + this.settings.timeoutMs + DELIVERY_LEASE_MARGIN_MS);
  }

  /** This process's recent attempts, for the status report. */
  health(): WebhookHealth {
    return {
      attemptsLastFiveMinutes: Object.fromEntries(WEBHOOK_ATTEMPT_OUTCOMES.map((outcome) => [outcome, this.recentAttempts.total(outcome)])) as Record<WebhookAttemptOutcome, number>,
      lastFailure: this.lastFailure,
    };
  }

  private async post(
    webhook: { webhook_id: string; url: string; secret: string; event_id: string; previous_event_id: string | null },
    message: object,
  ): Promise<{ statusCode: number | null; error: string | null; failureKind: WebhookFailureKind | null }> {
    const body = JSON.stringify(message);
    const id = (message as { id: string }).id;
    const timestamp = this.clock.now();
    const signature = new StandardWebhook(webhook.secret).sign(id, timestamp, body);
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const refused = await refusedTarget(new URL(webhook.url), this.settings.allowPrivate, this.resolver);
      if (refused) return { statusCode: null, error: `refused: the URL ${refused}`, failureKind: 'address_refused' };
      const response = await request(webhook.url, {
        method: 'POST',
        dispatcher: this.dispatcher,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'agent-gateway-webhooks/1.0',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
          [WEBHOOK_CURSOR_HEADERS.cursor]: webhook.event_id,
          ...(webhook.previous_event_id === null ? {} : { [WEBHOOK_CURSOR_HEADERS.previousCursor]: webhook.previous_event_id }),
        },
        body,
        signal: AbortSignal.any([deadline, this.shutdown.signal]),
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return ok
        ? { statusCode: response.statusCode, error: null, failureKind: null }
        : { statusCode: response.statusCode, error: `the receiver answered ${response.statusCode}`, failureKind: 'error_status' };
    } catch (error) {
      const reason = deadline.aborted ? `no answer within ${this.settings.timeoutMs} ms` : String((error as Error).message ?? error);
      this.logger.debug({ webhookId: webhook.webhook_id, err: error }, 'webhook attempt failed');
      return { statusCode: null, error: reason, failureKind: deadline.aborted ? 'timeout' : connectionFailureKind(error) };
    }
  }

  private async checkUrl(raw: string): Promise<URL> {
    if (raw.length > WEBHOOK_LIMITS.urlMaxLength) throw AppError.validation({ url: `must be at most ${WEBHOOK_LIMITS.urlMaxLength} characters` });
    // The rule the REST schema states (webhook.schemas.ts); WHATWG's parser must then read it too.
    const malformed = AppError.validation({ url: `must be ${WEBHOOK_URL.description}` });
    // Surrounding white space is forgiven, as WHATWG's parser forgives it; the REST schema is stricter.
    if (!isHttpUrl(raw.trim(), WEBHOOK_URL)) throw malformed;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw malformed;
    }
    let refused: string | undefined;
    try {
      refused = await refusedTarget(url, this.settings.allowPrivate, this.resolver);
    } catch (error) {
      if (error instanceof HostResolutionError) throw new AppError('upstream_unavailable', `${error.message}; try again shortly`);
      throw error;
    }
    if (refused) throw AppError.validation({ url: refused });
    return url;
  }

  private checkEvents(events: readonly string[] | undefined): BookingEventType[] {
    if (events === undefined) return [...BOOKING_EVENT_TYPES];
    if (events.length === 0) throw AppError.validation({ events: 'must list at least one event, or be omitted for all' });
    if (events.length > WEBHOOK_LIMITS.eventsMax) throw AppError.validation({ events: `must list at most ${WEBHOOK_LIMITS.eventsMax} events` });
    // Named by index, as the REST schema's item enum names it.
    const unknown = events.findIndex((event) => !(BOOKING_EVENT_TYPES as readonly string[]).includes(event));
    if (unknown >= 0) throw AppError.validation({ [`events.${unknown}`]: `must be one of ${BOOKING_EVENT_TYPES.join(', ')} (not ${echo(events[unknown]!)})` });
    return [...new Set(events)] as BookingEventType[];
  }

  private async findOwned(actor: AgentRecord, webhookId: string): Promise<Webhook> {
    const webhook = isUuid(webhookId) ? await this.em.findOne(Webhook, webhookId) : null;
    if (!webhook) throw new AppError('not_found', `no webhook ${echo(webhookId)}`);
    requireOwner(actor, webhook.agent.id, 'webhook');
    return webhook;
  }
}

function connectionFailureKind(error: unknown): WebhookFailureKind {
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (code === 'ECONNREFUSED') return 'connection_refused';
  // The peer answered, but not in HTTP (undici leaves `code` unset on some of these).
  if (name === 'HTTPParserError' || (typeof code === 'string' && code.startsWith('HPE_'))) return 'invalid_response';
  return 'connection_failed';
}
