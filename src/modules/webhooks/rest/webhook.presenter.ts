import type { WebhookView } from '../webhook.service.js';

/** A webhook as the REST routes show it; the secret only in the registration response. */
export function presentWebhook(webhook: WebhookView & { secret?: string }) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    created_at: webhook.createdAt.toISOString(),
    disabled_at: webhook.disabledAt?.toISOString() ?? null,
    ...(webhook.secret ? { secret: webhook.secret } : {}),
  };
}
