import { useState } from 'preact/hooks';
import { Failure, html, Loading, Notice, useLoad } from '../browse/ui.js';
import {
  ConsoleDeleteWebhookDocument,
  ConsoleDeliveriesDocument,
  ConsoleDisableWebhookDocument,
  ConsoleEnableWebhookDocument,
  ConsoleRedeliverDocument,
  ConsoleRegisterWebhookDocument,
  ConsoleWebhooksDocument,
  type ConsoleDeliveryFragment,
  type ConsoleWebhookFragment,
} from '../generated/console/graphql.js';
import { CopyField } from './copy-field.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { formatDate, formatTime } from './time.js';

const EVENT_TYPES = ['booking.created', 'booking.cancelled', 'booking.transferred', 'booking.reminder'] as const;

/** Webhooks: register (the signing secret shown once), enable/disable, delete, and each one's delivery log with redelivery. */
export function WebhooksView() {
  const [load, , reload] = useLoad(() => api(ConsoleWebhooksDocument), 'webhooks');
  const [notice, setNotice] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);
  const report = (kind: 'info' | 'error', text: string) => setNotice({ kind, text });

  return html`<div class="stack">
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    <${RegisterForm} onRegistered=${reload} />
    <section class="panel" aria-labelledby="webhooks-title">
      <div class="panel-head">
        <h2 id="webhooks-title">Webhooks</h2>
        <button type="button" class="secondary" onClick=${reload}>Refresh<span class="visually-hidden"> webhooks</span></button>
      </div>
      ${load.status === 'loading' ? html`<${Loading} label="Loading webhooks…" />` : null}
      ${load.status === 'error' ? html`<${Failure} message=${load.message} retry=${load.retry} />` : null}
      ${load.status === 'ready'
        ? load.data.webhooks.length
          ? html`<ul class="rows">${load.data.webhooks.map((webhook) => html`<${WebhookRow} key=${webhook.id} webhook=${webhook} onChanged=${reload} report=${report} />`)}</ul>`
          : html`<p class="empty">No webhooks yet.</p>`
        : null}
    </section>
  </div>`;
}

function WebhookRow({ webhook, onChanged, report }: { webhook: ConsoleWebhookFragment; onChanged: () => void; report: (kind: 'info' | 'error', text: string) => void }) {
  const [showLog, setShowLog] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>, done: string) => {
    setBusy(true);
    try {
      await action();
      report('info', done);
      onChanged();
    } catch (failure) {
      report('error', describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  return html`<li class="row webhook" data-testid="webhook">
    <div class="row-main">
      <strong class="url">${webhook.url}</strong>
      <span class="muted">${webhook.events.join(', ')}</span>
      ${webhook.enabled
        ? html`<span class="badge status-accepted">enabled</span>`
        : html`<span class="badge status-declined">disabled</span> <span class="muted">${webhook.disabledReason ?? ''}</span>`}
    </div>
    <div class="actions">
      ${webhook.enabled
        ? html`<button type="button" class="secondary" disabled=${busy} onClick=${() => run(() => api(ConsoleDisableWebhookDocument, { id: webhook.id }), 'Webhook disabled: no deliveries until you enable it.')}>Disable</button>`
        : html`<button type="button" disabled=${busy} onClick=${() => run(() => api(ConsoleEnableWebhookDocument, { id: webhook.id }), 'Webhook enabled.')}>Enable</button>`}
      <button type="button" class="secondary" aria-expanded=${showLog} onClick=${() => setShowLog(!showLog)}>${showLog ? 'Hide deliveries' : 'Deliveries'}</button>
      <button type="button" class="secondary danger" disabled=${busy} onClick=${() => run(() => api(ConsoleDeleteWebhookDocument, { id: webhook.id }), 'Webhook deleted.')}>Delete</button>
    </div>
    ${showLog ? html`<${DeliveryLog} webhookId=${webhook.id} report=${report} />` : null}
  </li>`;
}

function DeliveryLog({ webhookId, report }: { webhookId: string; report: (kind: 'info' | 'error', text: string) => void }) {
  const [load, , reload] = useLoad(() => api(ConsoleDeliveriesDocument, { webhookId }), webhookId);
  const redeliver = async (delivery: ConsoleDeliveryFragment) => {
    try {
      await api(ConsoleRedeliverDocument, { deliveryId: delivery.id });
      report('info', `Event ${delivery.eventCursor} queued again as a new delivery.`);
      reload();
    } catch (failure) {
      report('error', describeError(failure));
    }
  };
  return html`<div class="deliveries">
    <div class="panel-head">
      <h3>Deliveries, newest first</h3>
      <button type="button" class="secondary" onClick=${reload}>Refresh<span class="visually-hidden"> deliveries</span></button>
    </div>
    ${load.status === 'loading' ? html`<${Loading} label="Loading deliveries…" />` : null}
    ${load.status === 'error' ? html`<${Failure} message=${load.message} retry=${load.retry} />` : null}
    ${load.status === 'ready'
      ? load.data.webhookDeliveries.length
        ? html`<table>
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              ${load.data.webhookDeliveries.map(
                (delivery) => html`<tr data-testid="delivery">
                  <td>${delivery.eventType} <span class="muted">#${delivery.eventCursor}</span><br /><span class="muted">${formatDate(new Date(delivery.createdAt))} ${formatTime(new Date(delivery.createdAt))}</span></td>
                  <td><span class=${`badge delivery-${delivery.status}`}>${delivery.status}</span>${delivery.lastError ? html`<br /><span class="muted">${delivery.lastError}</span>` : null}</td>
                  <td>${delivery.attempts.map((attempt) => `${attempt.statusCode ?? attempt.error ?? '—'} (${attempt.durationMs} ms)`).join(', ') || '—'}</td>
                  <td><button type="button" class="secondary" aria-label=${`Redeliver event ${delivery.eventCursor}`} onClick=${() => redeliver(delivery)}>Redeliver</button></td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p class="empty">No deliveries yet.</p>`
      : null}
  </div>`;
}

function RegisterForm({ onRegistered }: { onRegistered: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([...EVENT_TYPES]);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!events.length) return setError('Choose at least one event.');
    setBusy(true);
    setError(null);
    try {
      const { registerWebhook } = await api(ConsoleRegisterWebhookDocument, { input: { url: url.trim(), events } });
      setSecret(registerWebhook.secret);
      setUrl('');
      onRegistered();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  const toggle = (type: string) => setEvents(events.includes(type) ? events.filter((item) => item !== type) : [...events, type]);
  return html`<form class="panel form-grid" onSubmit=${submit} aria-labelledby="register-title" noValidate>
    <h2 id="register-title">Add a webhook</h2>
    <label for="wh-url">URL</label>
    <input id="wh-url" type="url" placeholder="https://example.com/hooks" value=${url} onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} />
    <fieldset>
      <legend>Events</legend>
      ${EVENT_TYPES.map(
        (type) => html`<label class="check"><input type="checkbox" checked=${events.includes(type)} onChange=${() => toggle(type)} /> ${type}</label>`,
      )}
    </fieldset>
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    ${secret
      ? html`<${CopyField} id="wh-secret" label="Signing secret (Standard Webhooks)" value=${secret} dismissLabel="I have saved the secret" onDismiss=${() => setSecret(null)} />`
      : null}
    <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Adding…' : 'Add webhook'}</button></div>
  </form>`;
}
