/**
 * Webhooks: signed HTTP deliveries of booking events (Standard Webhooks), from a transactional outbox.
 *
 * Glossary
 * - webhook: an agent's endpoint (URL, events, secret `whsec_…`); at most 20 per agent.
 * - fan-out: events committed with a matching endpoint become deliveries, in batches, apart from the write.
 * - delivery: one event on its way to one webhook endpoint, with its attempts.
 * - claim: a dispatcher leases due deliveries (skip locked), attempts them, records the outcomes in batches.
 * - disable: an endpoint whose deliveries failed WEBHOOK_DISABLE_AFTER times in a row stops receiving.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import type { Statements } from '../../platform/db/statements.js';
import { registerConstraintErrors } from '../../platform/errors.js';
import { BackgroundLoop } from '../../platform/jobs/background-loop.js';
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
import { fanOutWebhookEventsFunction } from './sql/fan-out-webhook-events.function.js';

export { WEBHOOK_CURSOR_HEADERS, type WebhookFailureKind, type WebhookHealth, type WebhookService, type WebhookSettings } from './webhook.service.js';

export const webhooksEntities = [Webhook, WebhookDelivery, WebhookAttempt];
export const webhooksResolvers = [WebhookResolver];

/** The module's functions and triggers, in their current definitions (applied after the migrations). */
export const webhooksSqlDefinitions = [webhooksPerAgentLimitTrigger, claimWebhookDeliveriesFunction, recordWebhookAttemptsFunction, fanOutWebhookEventsFunction];

export interface WebhooksDeps {
  em: EntityManager;
  clock: Clock;
  logger: Logger;
  statements: Statements;
  settings: WebhookSettings;
  metrics: Metrics;
  /** Commits with deliveries wake the fan-out. */
  bus: BookingEventBus;
}

/** Webhook attempts in flight per process. */
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

  // Webhook deliveries are claimed from their table, woken by the commits that create them.
  const dispatcher = new BackgroundLoop({
    name: 'webhook-dispatcher',
    intervalMs: DISPATCH_INTERVAL_MS,
    logger,
    pass: () => webhooks.deliverDue(DISPATCH_CAPACITY),
  });
  webhooks.onDeliveriesDue(() => dispatcher.kick());
  // Events queued by commits become deliveries in batches, apart from the claims, so a claim never
  // waits for them; woken by the commits and by a dispatcher that found too little due.
  const fanOut = new BackgroundLoop({
    name: 'webhook-fan-out',
    intervalMs: DISPATCH_INTERVAL_MS,
    logger,
    pass: () => webhooks.fanOutQueuedEvents(),
  });
  deps.bus.onDeliveriesCommitted(() => fanOut.kick());
  webhooks.onDeliveriesRunningLow(() => fanOut.kick());

  return {
    webhooks,
    resolvers: [new WebhookResolver(webhooks)],
    registerRoutes: (app: FastifyInstance) => registerWebhookRoutes(app, webhooks),
    tasks: {
      [DELIVER_WEBHOOK_TASK]: async (payload: unknown) => webhooks.deliverOne((payload as { deliveryId: string }).deliveryId),
    },
    startBackground() {
      fanOut.start();
      dispatcher.start();
    },
    async stop() {
      await Promise.all([fanOut.stop(), dispatcher.stop()]);
      await webhooks.settle();
    },
  };
}
