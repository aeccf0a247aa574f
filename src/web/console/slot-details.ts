import { useState } from 'preact/hooks';
import { html } from '../browse/ui.js';
import { CancelConsoleBookingDocument, CancelConsoleOccurrenceDocument } from '../generated/graphql.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { formatDate, formatRange } from './time.js';
import type { WeekSlot } from './week-data.js';

const FREQUENCIES: Record<string, string> = { DAILY: 'every day', WEEKLY: 'every week', MONTHLY: 'every month', YEARLY: 'every year', HOURLY: 'every hour' };
const WEEKDAYS: Record<string, string> = { MO: 'Mon', TU: 'Tue', WE: 'Wed', TH: 'Thu', FR: 'Fri', SA: 'Sat', SU: 'Sun' };

/** `every week on Mon, Fri, 10 times`; the rule itself when it says more than that. */
export function describeRule(rrule: string): string {
  const rule = rrule.split('\n').find((line) => !line.startsWith('DTSTART')) ?? '';
  const parts = new Map(rule.replace(/^RRULE:/, '').split(';').map((part) => part.split('=') as [string, string]));
  const frequency = FREQUENCIES[parts.get('FREQ') ?? ''];
  const known = new Set(['FREQ', 'COUNT', 'BYDAY', 'INTERVAL', 'UNTIL']);
  if (!frequency || [...parts.keys()].some((key) => !known.has(key)) || (parts.get('INTERVAL') ?? '1') !== '1') return rule;
  const days = parts.get('BYDAY')?.split(',').map((day) => WEEKDAYS[day] ?? day).join(', ');
  const count = parts.get('COUNT');
  const until = parts.get('UNTIL');
  return [frequency + (days ? ` on ${days}` : ''), count ? `${count} times` : '', until ? `until ${until.slice(0, 8)}` : ''].filter(Boolean).join(', ');
}

/** One slot's details: its time, its series, and the two ways to cancel (one occurrence, or all of it). */
export function SlotDetails({ slot, onClose, onChanged }: { slot: WeekSlot; onClose: () => void; onChanged: (message: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const series = slot.booking.rrule !== null;
  const when = formatRange(new Date(slot.startsAt), new Date(slot.endsAt));

  const run = async (action: () => Promise<unknown>, message: string) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      onChanged(message);
    } catch (failure) {
      setError(describeError(failure));
      setBusy(false);
    }
  };
  const cancelOccurrence = () =>
    run(() => api(CancelConsoleOccurrenceDocument, { bookingId: slot.booking.id, startsAt: slot.startsAt }), `Cancelled the occurrence of ${when}.`);
  const cancelBooking = () => run(() => api(CancelConsoleBookingDocument, { id: slot.booking.id }), series ? 'Cancelled the whole series.' : `Cancelled ${when}.`);

  return html`<section class="panel slot-details" aria-labelledby="slot-title" data-testid="slot-details">
    <div class="panel-head">
      <h2 id="slot-title" tabindex="-1">${series ? 'Recurring booking' : 'Booking'}</h2>
      <button type="button" class="link" aria-label="Close the details" onClick=${onClose}>×</button>
    </div>
    <p>${when}</p>
    ${series
      ? html`<p class="muted">Repeats ${describeRule(slot.booking.rrule!)}; first on ${formatDate(new Date(slot.booking.startsAt))}.</p>`
      : null}
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    <div class="actions">
      ${series ? html`<button type="button" disabled=${busy} onClick=${cancelOccurrence}>Cancel this occurrence</button>` : null}
      ${confirming
        ? html`<span class="confirm">
            <span>${series ? 'Cancel every occurrence?' : 'Cancel this booking?'}</span>
            <button type="button" class="danger" disabled=${busy} onClick=${cancelBooking}>Yes, cancel</button>
            <button type="button" class="secondary" onClick=${() => setConfirming(false)}>Keep it</button>
          </span>`
        : html`<button type="button" class="secondary" disabled=${busy} onClick=${() => setConfirming(true)}>${series ? 'Cancel the series' : 'Cancel booking'}</button>`}
    </div>
  </section>`;
}
