/**
 * Webhooks: signed HTTP deliveries of booking events (Standard Webhooks), from a transactional outbox.
 *
 * Glossary
 * - webhook: an agent's endpoint (URL, events, secret `whsec_…`); at most 20 per agent.
 * - queued event: an event committed with a matching endpoint waits in `webhook_fanout`, one row for all its endpoints.
 * - delivery: one event on its way to one webhook endpoint, with its attempts; its row is written with the
 *   outcome of its first attempt (`webhook_delivery_id(event, endpoint)` names it before that).
 * - claim: a dispatcher leases due deliveries and queued events (skip locked), attempts them, records the outcomes in batches.
 * - disable: an endpoint whose deliveries failed WEBHOOK_DISABLE_AFTER times in a row stops receiving.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import { BackgroundLoop } from '../../platform/jobs/background-loop.js';
import type { ForegroundLoad } from '../../platform/jobs/foreground-load.js';
import type { Logger } from '../../platform/logger.js';
import type { CounterSeries } from '../../platform/metrics/families.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import type { BookingEventBus } from '../booking-events/index.js';
import { WEBHOOK_CONSTRAINTS } from './constraint-errors.js';
import { Webhook, WebhookAttempt, WebhookDelivery } from './entities/webhook.entity.js';
import { WebhookResolver } from './graphql/webhook.resolver.js';
import { registerWebhookRoutes } from './rest/webhook.routes.js';
import { DELIVER_WEBHOOK_TASK, WEBHOOK_ATTEMPT_OUTCOMES, WebhookService, type WebhookAttemptOutcome, type WebhookSettings } from './webhook.service.js';
import { webhooksPerAgentLimitTrigger } from './sql/webhooks-per-agent-limit.trigger.js';
import { claimWebhookDeliveriesFunction } from './sql/claim-webhook-deliveries.function.js';
import { recordWebhookAttemptsFunction } from './sql/record-webhook-attempts.function.js';
import { webhookDeliveryIdFunction } from './sql/webhook-delivery-id.function.js';
import { webhookTakesEventFunction } from './sql/webhook-takes-event.function.js';

export { WEBHOOK_CURSOR_HEADERS, type WebhookFailureKind, type WebhookHealth, type WebhookService, type WebhookSettings } from './webhook.service.js';

export const webhooksEntities = [Webhook, WebhookDelivery, WebhookAttempt];
export const webhooksResolvers = [WebhookResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const webhooksSqlDefinitions = [
  webhooksPerAgentLimitTrigger,
  // Before the functions that call them (a function's body is checked when it is created).
  webhookDeliveryIdFunction,
  webhookTakesEventFunction,
  claimWebhookDeliveriesFunction,
  recordWebhookAttemptsFunction,
];

export interface WebhooksDeps {
  em: EntityManager;
  clock: Clock;
  logger: Logger;
  statements: Statements;
  settings: WebhookSettings;
  metrics: Metrics;
  /** Commits that queued events wake the dispatcher. */
  bus: BookingEventBus;
  /** How busy the process is with requests: the dispatcher yields to them. */
  foreground: ForegroundLoad;
  /** While the process is busy, the dispatcher claims at most this often (0: it never yields). */
  busyPaceMs: number;
}

/** Webhook attempts in flight per process (a claim's last queued event may bring up to 19 more: all of its endpoints). */
const DISPATCH_CAPACITY = 32;
/** How often due deliveries nobody announced (a writer that died after its commit, another process's retry) are looked for. */
const DISPATCH_INTERVAL_MS = 1_000;

export function createWebhooksModule(deps: WebhooksDeps) {
  registerConstraintErrors(WEBHOOK_CONSTRAINTS);
  const { logger } = deps;
  const attemptsTotal = deps.metrics.counter(
    'gateway_webhook_delivery_attempts_total',
    'Webhook delivery attempts made by this process, by outcome: delivered, retrying (failed, retry scheduled), failed (given up)',
    ['outcome'],
  );
  const attemptOutcomes = Object.fromEntries(WEBHOOK_ATTEMPT_OUTCOMES.map((outcome) => [outcome, attemptsTotal.series({ outcome })])) as Record<WebhookAttemptOutcome, CounterSeries>;
  const webhooks = new WebhookService(deps.em, deps.clock, deps.statements, deps.settings, logger, attemptOutcomes);

  // Deliveries and queued events are claimed from their tables, woken by the commits that queue events
  // and by finished attempts.
  const dispatcher = new BackgroundLoop({
    name: 'webhook-dispatcher',
    intervalMs: DISPATCH_INTERVAL_MS,
    logger,
    pass: () => webhooks.deliverDue(DISPATCH_CAPACITY),
    // Requests first: under a burst, events wait as one queued row each and are delivered at a bounded pace,
    // then at full speed once the burst is over (each delivery costs about a fifth of a create's CPU).
    ...(deps.busyPaceMs > 0 ? { whileBusy: { busy: () => deps.foreground.busy(), everyMs: deps.busyPaceMs } } : {}),
  });
  webhooks.onDeliveriesDue(() => dispatcher.kick());
  deps.bus.onDeliveriesCommitted(() => dispatcher.kick());

  return {
    webhooks,
    resolvers: [new WebhookResolver(webhooks)],
    registerRoutes: (app: FastifyInstance) => registerWebhookRoutes(app, webhooks),
    tasks: {
      [DELIVER_WEBHOOK_TASK]: async (payload: unknown) => webhooks.deliverOne((payload as { deliveryId: string }).deliveryId),
    },
    startBackground() {
      dispatcher.start();
    },
    async stop() {
      await dispatcher.stop();
      await webhooks.settle();
    },
  };
}
